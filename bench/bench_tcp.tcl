# ns-2 half of the TCP benchmark (bench/bench_tcp.py): a 28 MB bulk transfer over a 4 Mbit/s,
# 20 ms bottleneck with a 500-packet DropTail; Agent/TCP/Sack1 with 1500-byte packets (1460 B
# payload), a large window, DelAck sink; no tracing. Prints the time the last byte is acknowledged.
# Usage: ns bench_tcp.tcl <bytes> <stop_s>
set bytes [lindex $argv 0]
set stop [lindex $argv 1]
set ns [new Simulator]
Agent/TCP set packetSize_ 1460
Agent/TCP set window_ 100000
set s [$ns node]
set r [$ns node]
set d [$ns node]
$ns duplex-link $s $r 100Mb 1ms DropTail
$ns duplex-link $r $d 4Mb 20ms DropTail
$ns queue-limit $r $d 501
$ns queue-limit $s $r 1000
set tcp [new Agent/TCP/Sack1]
set sink [new Agent/TCPSink/Sack1/DelAck]
$ns attach-agent $s $tcp
$ns attach-agent $d $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
set npkts [expr int(ceil($bytes / 1460.0))]
$ns at 0.0 "$ftp produce $npkts"
set done 0
proc check {} {
    global ns tcp npkts done
    if {!$done && [$tcp set ack_] >= $npkts} {
        set done 1
        puts "done [$ns now]"
    }
    $ns at [expr [$ns now] + 0.01] "check"
}
$ns at 0.0 "check"
$ns at $stop "exit 0"
$ns run
