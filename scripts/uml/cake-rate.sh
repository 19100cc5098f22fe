#!/bin/sh
# Where does Linux's CAKE lose rate in user-mode Linux? aqm-path.sh's path (srv - rtr - dly - cli,
# 20 ms each way in dly) with rtr's egress as the bottleneck, configured as CONF (below), for two
# measurements: UDP (drain.py: N back-to-back datagrams of 1500 IP bytes, the shaper's achieved
# rate from the receiver's kernel timestamps) and TCP (a lone CUBIC download of SIZE bytes, no
# audio, aqm_flows.py), each with `tc -s` of the bottleneck and the server's MIB counters. Results
# as files under OUT (a host directory: hostfs). Run as root:
#   linux.uml mem=1024M rootfstype=hostfs rootflags=/ rw init=$PWD/scripts/uml/cake-rate.sh \
#     OUT=/tmp/cake-rate UDP=cake,cake_noaqm,htb_pfifo TCP=cake,htb_fq_codel REPS=2 con=null con0=fd:0,fd:1 </dev/null
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t tmpfs tmp /run
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
OUT=${OUT:-/tmp/cake-rate}
SIZE=${SIZE:-8000000}
N=${N:-400}
REPS=${REPS:-2}
UDP=$(echo "${UDP:-cake,cake_noaqm,htb_pfifo}" | tr , ' ')
TCP=$(echo "${TCP:-cake,htb_fq_codel,htb_pfifo}" | tr , ' ')
KBIT=${KBIT:-3135}  # IP rate; the frame rate below counts the veth's 14-B header as tc does
WIRE=$(( KBIT * 1514 / 1500 ))kbit
mkdir -p "$OUT"
{
for m in veth sch_htb sch_netem sch_fq_codel sch_cake; do
  insmod "$(find /usr/lib/uml/modules -name "$m.ko*" | head -n 1)"
done
for n in srv rtr dly cli; do ip netns add $n; ip -n $n link set lo up; done
mk() { ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
       ip -n "$1" addr add "$5" dev "$2"; ip -n "$3" addr add "$6" dev "$4"
       for e in "$1 $2" "$3 $4"; do set -- $e
         ip netns exec "$1" ethtool -K "$2" gso off tso off gro off tx off rx off >/dev/null 2>&1
         ip -n "$1" link set "$2" up; done; }
mk srv s0 rtr r0 10.0.1.1/24 10.0.1.2/24
mk rtr r1 dly d0 10.0.2.1/24 10.0.2.2/24
mk dly d1 cli c1 10.0.3.1/24 10.0.3.2/24
ip -n srv route add default via 10.0.1.2
ip -n rtr route add 10.0.3.0/24 via 10.0.2.2
ip -n dly route add 10.0.1.0/24 via 10.0.2.1
ip -n cli route add default via 10.0.3.1
for n in rtr dly; do ip netns exec $n sysctl -qw net.ipv4.ip_forward=1; done
ip netns exec srv sysctl -qw net.ipv4.tcp_no_metrics_save=1
ip netns exec dly tc qdisc add dev d1 root netem delay 20ms limit 10000
ip netns exec dly tc qdisc add dev d0 root netem delay 20ms limit 10000
conf() {  # the bottleneck: CAKE as root (as deployed; without AQM: rtt 3600 s), or HTB + a child
  T="ip netns exec rtr tc"
  $T qdisc del dev r1 root 2>/dev/null
  case $1 in
    cake) $T qdisc add dev r1 root cake bandwidth $WIRE memlimit 750000 ;;
    cake_noaqm) $T qdisc add dev r1 root cake bandwidth $WIRE memlimit 750000 besteffort flowblind interplanetary ;;
    htb_*) $T qdisc add dev r1 root handle 1: htb default 1
           $T class add dev r1 parent 1: classid 1:1 htb rate $WIRE ceil $WIRE burst 4542 cburst 4542
           case $1 in htb_pfifo) $T qdisc add dev r1 parent 1:1 pfifo limit 500 ;;
                      *) $T qdisc add dev r1 parent 1:1 fq_codel limit 500 ;; esac ;;
  esac
}
for r in $(seq 1 $REPS); do
  for c in $UDP; do
    D=$OUT/udp-$c-$r; mkdir -p $D; conf $c
    ip netns exec cli $PY "$HERE/drain.py" recv $N 3 $KBIT > $D/recv.json &
    RP=$!; sleep 1.5
    ip netns exec srv $PY "$HERE/drain.py" send 10.0.3.2 $N 1500
    wait $RP
    ip netns exec rtr tc -s qdisc show dev r1 > $D/tc.txt
  done
  for c in $TCP; do
    D=$OUT/tcp-$c-$r; mkdir -p $D; conf $c
    ip netns exec srv cat /proc/net/snmp /proc/net/netstat > $D/mib0.txt
    ip netns exec cli $PY "$HERE/aqm_flows.py" recv $D/recv.json 120 &
    RP=$!; sleep 1
    ip netns exec srv $PY "$HERE/aqm_flows.py" send 10.0.3.2 "$SIZE" -1 0 > $D/send.json &
    SP=$!
    while [ -n "$SS" ] && kill -0 $SP 2>/dev/null; do
      { date +%s.%N; ip netns exec srv ss -tinH dst 10.0.3.2 dport = 5001; } >> $D/ss.txt; sleep 0.2; done
    wait $SP; wait $RP
    ip netns exec rtr tc -s qdisc show dev r1 > $D/tc.txt
    ip netns exec srv cat /proc/net/snmp /proc/net/netstat > $D/mib1.txt
  done
done
} > $OUT/log.txt 2>&1
echo o > /proc/sysrq-trigger
poweroff -f
