# ns-2 side of jitterlab's TCP validation: Chodorek's dumbbell with N TCP SACK FTP flows and an
# optional bursty CBR video flow. Run by compare.py; by hand:
#   ns dumbbell.tcl <queue DropTail|RED> <nflows> <video_mbps 0=off> <window_pkts> <duration_s> <out_prefix> <starts>
# where <starts> is a comma-separated list of the TCP flows' start times in seconds; an optional
# eighth argument picks the TCP: Sack1 (default; sink TCPSink/Sack1/DelAck), Newreno (sink
# TCPSink/DelAck) or Sack1-ECN (Sack1 with ecn_ 1, and RED marks instead of dropping: setbit_ true).
# Topology: S_i --100Mb/1us-- R1 --2Mb/5ms (queue 50)-- R2 --100Mb/1us-- D_i; all other queues
# DropTail 50 (ns-2's default limit). TCP: Agent/TCP/Sack1 (1000-byte packets = 960 B payload + 40 B
# headers), sinks Agent/TCPSink/Sack1/DelAck (interval 100 ms). Video: 1000-byte UDP packets, a
# frame of 5*B packets back to back every 40 ms (Application/Traffic/CBR of 5000*B bytes handed to
# a UDP agent with packetSize_ 1000 splits into back-to-back packets).
# Writes <out_prefix>.tr (bottleneck queue trace), <out_prefix>.cwnd (cwnd_ of flow 1) and prints
# one line per TCP flow: "tcp <i> ack <highest cumulative ack in packets>".
# An optional ninth argument is the bottleneck rate (default 2Mb; Chodorek's experiment 2 uses 10Mb).
if {$argc < 7 || $argc > 9} {
    puts stderr "usage: ns dumbbell.tcl queue nflows video_mbps window duration out_prefix starts"
    exit 2
}
set qtype [lindex $argv 0]
set nflows [lindex $argv 1]
set vmbps [lindex $argv 2]
set window [lindex $argv 3]
set duration [lindex $argv 4]
set prefix [lindex $argv 5]
set starts [split [lindex $argv 6] ","]
set variant Sack1
if {$argc >= 8} { set variant [lindex $argv 7] }
set brate 2Mb
if {$argc == 9} { set brate [lindex $argv 8] }

set ns [new Simulator]
Queue set limit_ 50
Agent/TCP set packetSize_ 960
Agent/TCP set window_ $window
# RED as Chodorek's Table 1 (ns-2 defaults otherwise: bytes_, queue_in_bytes_, mean_pktsize_ 500).
Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
Queue/RED set q_weight_ 0.002
Queue/RED set linterm_ 10
Queue/RED set gentle_ false
Queue/RED set setbit_ false
if {$variant == "Sack1-ECN"} {
    Agent/TCP set ecn_ 1
    Queue/RED set setbit_ true
}

set r1 [$ns node]
set r2 [$ns node]
$ns simplex-link $r1 $r2 $brate 5ms $qtype
$ns simplex-link $r2 $r1 $brate 5ms DropTail
$ns queue-limit $r1 $r2 50

set tr [open $prefix.tr w]
$ns trace-queue $r1 $r2 $tr

set cw [open $prefix.cwnd w]
for {set i 1} {$i <= $nflows} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb 1us DropTail
    $ns duplex-link $r2 $d($i) 100Mb 1us DropTail
    if {$variant == "Newreno"} {
        set tcp($i) [new Agent/TCP/Newreno]
        set sink($i) [new Agent/TCPSink/DelAck]
    } else {
        set tcp($i) [new Agent/TCP/Sack1]
        set sink($i) [new Agent/TCPSink/Sack1/DelAck]
    }
    $tcp($i) set fid_ $i
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    # Start times come from the caller (the same on the jitterlab side).
    $ns at [lindex $starts [expr $i - 1]] "$ftp($i) start"
    if {$i == 1} {
        $tcp($i) attach $cw
        $tcp($i) trace cwnd_
    }
}

if {$vmbps > 0} {
    set sv [$ns node]
    set dv [$ns node]
    $ns duplex-link $sv $r1 100Mb 1us DropTail
    $ns duplex-link $r2 $dv 100Mb 1us DropTail
    set udp [new Agent/UDP]
    $udp set packetSize_ 1000
    $udp set fid_ 0
    $ns attach-agent $sv $udp
    set null [new Agent/Null]
    $ns attach-agent $dv $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr attach-agent $udp
    $cbr set packetSize_ [expr 5000 * $vmbps]
    $cbr set interval_ 0.04
    $cbr set random_ 0
    $ns at 0.0 "$cbr start"
}

proc finish {} {
    global ns tr cw nflows tcp
    for {set i 1} {$i <= $nflows} {incr i} {
        puts "tcp $i ack [$tcp($i) set ack_]"
    }
    $ns flush-trace
    close $tr
    close $cw
    exit 0
}
$ns at $duration "finish"
$ns run
