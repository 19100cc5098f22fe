# ns-2 half of `bench/run vs-ns2` (bench/bench_vs_ns2.py): one point of Chodorek's dumbbell as the
# `elastic` preset models it (validation/ns2/dumbbell.tcl, plus the bottleneck rate and paced video).
# Usage: ns vs_ns2.tcl <DropTail|RED> <nflows> <bottleneck_mbps> <video_mbps> <bursty|paced>
#                      <duration_s> <out_prefix> <starts> <Sack1|Sack1-ECN>
# Writes the bottleneck queue trace to <out_prefix>.tr (ns-2's result on disk, as jitterlab writes
# its tables) and prints one line per TCP flow: "tcp <i> ack <highest cumulative ack in packets>".
set qtype [lindex $argv 0]
set nflows [lindex $argv 1]
set bmbps [lindex $argv 2]
set vmbps [lindex $argv 3]
set mode [lindex $argv 4]
set duration [lindex $argv 5]
set prefix [lindex $argv 6]
set starts [split [lindex $argv 7] ","]
set variant [lindex $argv 8]

set ns [new Simulator]
Queue set limit_ 50
Agent/TCP set packetSize_ 960
Agent/TCP set window_ 20
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
$ns simplex-link $r1 $r2 ${bmbps}Mb 5ms $qtype
$ns simplex-link $r2 $r1 ${bmbps}Mb 5ms DropTail
$ns queue-limit $r1 $r2 50
set tr [open $prefix.tr w]
$ns trace-queue $r1 $r2 $tr

for {set i 1} {$i <= $nflows} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb 1us DropTail
    $ns duplex-link $r2 $d($i) 100Mb 1us DropTail
    set tcp($i) [new Agent/TCP/Sack1]
    set sink($i) [new Agent/TCPSink/Sack1/DelAck]
    $tcp($i) set fid_ $i
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [lindex $starts [expr $i - 1]] "$ftp($i) start"
}

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
$cbr set random_ 0
if {$mode == "bursty"} {
    # a frame of 5*B packets back to back every 40 ms
    $cbr set packetSize_ [expr 5000 * $vmbps]
    $cbr set interval_ 0.04
} else {
    # the same packets spread evenly over the frame interval
    $cbr set packetSize_ 1000
    $cbr set interval_ [expr 0.008 / $vmbps]
}
$ns at 0.0 "$cbr start"

proc finish {} {
    global ns tr nflows tcp
    for {set i 1} {$i <= $nflows} {incr i} {
        puts "tcp $i ack [$tcp($i) set ack_]"
    }
    $ns flush-trace
    close $tr
    exit 0
}
$ns at $duration "finish"
$ns run
