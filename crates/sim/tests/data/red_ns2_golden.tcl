# Deterministic RED reference for tests/qdisc_red_ns2.rs, run with ns-2.35 (Debian ns2):
#   ns red_ns2_golden.tcl <maxthresh> <q_weight> <limit> <bytes 0|1>   (writes out.tr, ave.tr)
#   python3 red_ns2_golden.py <maxthresh> <q_weight> <limit> <bytes> > red_ns2_<case>.txt
# Cases: forced = 15 0.02 50 0, limit = 40 0.002 20 0, bytes = 15 0.02 50 1.
# CBR on/off sources into a 1 Mb/s RED bottleneck. max_p is tiny (linterm 1e9) so early drops never
# happen (count·p < 1 with wait); drops are avg-forced (use_mark_p false) or at the hard limit,
# which makes the run deterministic and comparable packet by packet.
set maxthresh [lindex $argv 0]
set qweight [lindex $argv 1]
set limit [lindex $argv 2]
set inbytes [lindex $argv 3]
set ns [new Simulator]
set tf [open out.tr w]
set n0 [$ns node]
set n1 [$ns node]
Queue/RED set thresh_ 5
Queue/RED set maxthresh_ $maxthresh
Queue/RED set q_weight_ $qweight
Queue/RED set linterm_ 1000000000
Queue/RED set gentle_ false
Queue/RED set use_mark_p_ false
Queue/RED set queue_in_bytes_ $inbytes
Queue/RED set bytes_ $inbytes
Queue/RED set mean_pktsize_ 500
$ns duplex-link $n0 $n1 1Mb 10ms RED
$ns queue-limit $n0 $n1 $limit
$ns trace-queue $n0 $n1 $tf
set redq [[$ns link $n0 $n1] queue]
set af [open ave.tr w]
$redq trace ave_
$redq attach $af
set null [new Agent/Null]
$ns attach-agent $n1 $null
proc cbr {size rate} {
    global ns n0 null
    set udp [new Agent/UDP]
    $udp set packetSize_ 2000
    $ns attach-agent $n0 $udp
    $ns connect $udp $null
    set c [new Application/Traffic/CBR]
    $c set packetSize_ $size
    $c set rate_ $rate
    $c set random_ 0
    $c attach-agent $udp
    return $c
}
set c1 [cbr 1000 1.5Mb]
set c2 [cbr 600 0.7Mb]
$ns at 0.1 "$c1 start"
$ns at 1.0 "$c1 stop"
$ns at 1.5 "$c1 start"
$ns at 2.5 "$c1 stop"
$ns at 0.3 "$c2 start"
$ns at 2.2 "$c2 stop"
$ns at 3.0 "$c2 start"
$ns at 3.5 "$c2 stop"
$ns at 3.2 "$c1 start"
$ns at 3.4 "$c1 stop"
proc finish {} {
    global ns tf af
    $ns flush-trace
    close $tf
    close $af
    exit 0
}
$ns at 4.0 "finish"
$ns run
