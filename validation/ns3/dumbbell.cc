// ns-3 side of validation/ns3/compare.py: N bulk TCP flows and an optional 80-byte audio stream
// (one UDP packet every 20 ms) from host s through r1 -- bottleneck -- r2 to host d. The
// bottleneck queue is any ns-3 queue disc, given with its attributes on the command line
// (--ns3::CoDelQueueDisc::Target=5ms); every other queue is large enough never to drop.
// Prints one JSON object: per-flow bytes received, the queue disc's counters and every audio
// packet's one-way delay.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

using namespace ns3;

static std::vector<double> g_owd_ms;
static std::vector<uint32_t> g_seq;

static std::ofstream g_trace;

static void
TraceVal(std::string what, uint32_t, uint32_t v)
{
    g_trace << Simulator::Now().GetSeconds() << " " << what << " " << v << "\n";
}

static void
TracePacing(DataRate, DataRate v)
{
    g_trace << Simulator::Now().GetSeconds() << " pacing " << v.GetBitRate() << "\n";
}

static void
TraceRtt(Time, Time v)
{
    g_trace << Simulator::Now().GetSeconds() << " rtt " << v.GetMicroSeconds() << "\n";
}

static void
HookTrace()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow", MakeBoundCallback(&TraceVal, "cwnd"));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/BytesInFlight", MakeBoundCallback(&TraceVal, "inflight"));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/PacingRate", MakeCallback(&TracePacing));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/RTT", MakeCallback(&TraceRtt));
}

static void
AudioRx(Ptr<Socket> sock)
{
    Ptr<Packet> p;
    while ((p = sock->Recv()))
    {
        SeqTsHeader h;
        p->RemoveHeader(h);
        g_owd_ms.push_back((Simulator::Now() - h.GetTs()).GetSeconds() * 1e3);
        g_seq.push_back(h.GetSeq());
    }
}

int
main(int argc, char* argv[])
{
    uint32_t flows = 1;
    std::string tcp = "TcpCubic";
    std::string queue = "ns3::FifoQueueDisc";
    std::string rate = "10Mbps";
    std::string delay = "10ms";
    std::string accessRate = "1Gbps";
    std::string accessDelay = "1ms";
    std::string starts = "";
    double duration = 30;
    bool audio = true;
    bool ecn = false;
    bool pacing = false;
    uint32_t mss = 1460;
    uint32_t iw = 10;
    uint32_t delAck = 2;
    std::string trace = "";
    std::string minRto = "200ms";
    CommandLine cmd;
    cmd.AddValue("flows", "bulk TCP flows", flows);
    cmd.AddValue("tcp", "ns-3 TCP congestion control type (TcpCubic, TcpNewReno, TcpBbr, TcpDctcp)", tcp);
    cmd.AddValue("queue", "bottleneck queue disc TypeId", queue);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way delay", delay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link one-way delay", accessDelay);
    cmd.AddValue("starts", "comma-separated TCP start times in seconds", starts);
    cmd.AddValue("duration", "seconds", duration);
    cmd.AddValue("audio", "send the 80-byte audio stream", audio);
    cmd.AddValue("ecn", "ECN-capable TCP (classic RFC 3168 echo, DCTCP's own for TcpDctcp)", ecn);
    cmd.AddValue("pacing", "TCP pacing (BBR needs it)", pacing);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("iw", "initial window in segments", iw);
    cmd.AddValue("minRto", "minimum RTO", minRto);
    cmd.AddValue("trace", "write the first flow's cwnd, bytes in flight, pacing rate and RTT here", trace);
    cmd.AddValue("delAck", "segments per delayed ACK (1: every segment)", delAck);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + tcp));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
    // Options as jitterlab's ns-3-like TCP: SACK, no timestamps (so a 1460-byte segment is a 1500-byte packet).
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(pacing));
    // The device queue holds one packet so the queue disc decides (ns-3's AQM examples do this).
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));

    NodeContainer n;
    n.Create(4); // s, r1, r2, d
    PointToPointHelper acc;
    acc.SetDeviceAttribute("DataRate", StringValue(accessRate));
    acc.SetChannelAttribute("Delay", StringValue(accessDelay));
    PointToPointHelper bn;
    bn.SetDeviceAttribute("DataRate", StringValue(rate));
    bn.SetChannelAttribute("Delay", StringValue(delay));
    NetDeviceContainer d0 = acc.Install(n.Get(0), n.Get(1));
    NetDeviceContainer d1 = bn.Install(n.Get(1), n.Get(2));
    NetDeviceContainer d2 = acc.Install(n.Get(2), n.Get(3));

    InternetStackHelper stack;
    stack.Install(n);
    TrafficControlHelper big;
    big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
    TrafficControlHelper bq;
    bq.SetRootQueueDisc(queue);
    for (auto c : {d0, d2})
    {
        big.Install(c);
    }
    QueueDiscContainer qd = bq.Install(d1.Get(0));
    big.Install(d1.Get(1));

    Ipv4AddressHelper a;
    a.SetBase("10.1.1.0", "255.255.255.0");
    a.Assign(d0);
    a.SetBase("10.1.2.0", "255.255.255.0");
    a.Assign(d1);
    a.SetBase("10.1.3.0", "255.255.255.0");
    Ipv4InterfaceContainer i2 = a.Assign(d2);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    Ipv4Address dst = i2.GetAddress(1);

    std::vector<double> st(flows, 0.0);
    {
        std::stringstream ss(starts);
        std::string tok;
        for (uint32_t i = 0; i < flows && std::getline(ss, tok, ','); i++)
        {
            st[i] = std::stod(tok);
        }
    }
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < flows; i++)
    {
        uint16_t port = 5000 + i;
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst, port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer ap = src.Install(n.Get(0));
        ap.Start(Seconds(st[i]));
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sp = sink.Install(n.Get(3));
        sp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sp.Get(0)));
    }
    if (audio)
    {
        Ptr<Socket> rx = Socket::CreateSocket(n.Get(3), UdpSocketFactory::GetTypeId());
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), 4000));
        rx->SetRecvCallback(MakeCallback(&AudioRx));
        UdpClientHelper cl(dst, 4000);
        cl.SetAttribute("MaxPackets", UintegerValue(0));
        cl.SetAttribute("Interval", TimeValue(MilliSeconds(20)));
        // 80-byte IP packets: 20 IP + 8 UDP + 52 payload (UdpClient's 12-byte SeqTs header inside).
        cl.SetAttribute("PacketSize", UintegerValue(52));
        ApplicationContainer ca = cl.Install(n.Get(0));
        ca.Start(Seconds(0));
    }
    if (!trace.empty())
    {
        g_trace.open(trace);
        Simulator::Schedule(Seconds(st[0]) + MilliSeconds(1), &HookTrace);
    }
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    QueueDisc::Stats s = qd.Get(0)->GetStats();
    std::cout << std::setprecision(9) << "{\"flows\":[";
    for (uint32_t i = 0; i < flows; i++)
    {
        std::cout << (i ? "," : "") << sinks[i]->GetTotalRx();
    }
    std::cout << "],\"queue\":{\"received\":" << s.nTotalReceivedPackets << ",\"dropped\":" << s.nTotalDroppedPackets
              << ",\"marked\":" << s.nTotalMarkedPackets << "},\"audio_owd_ms\":[";
    for (size_t i = 0; i < g_owd_ms.size(); i++)
    {
        std::cout << (i ? "," : "") << g_owd_ms[i];
    }
    std::cout << "],\"audio_seq\":[";
    for (size_t i = 0; i < g_seq.size(); i++)
    {
        std::cout << (i ? "," : "") << g_seq[i];
    }
    std::cout << "]}" << std::endl;
    Simulator::Destroy();
    return 0;
}
