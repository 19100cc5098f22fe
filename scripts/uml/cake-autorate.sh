#!/bin/sh
# Linux's CAKE autorate-ingress estimate on known arrivals, in Debian's user-mode Linux: namespace
# a sends UDP bursts (bursts.py) over a veth to b; b's ingress redirects them to ifb0, whose root
# qdisc is `cake bandwidth 1mbit autorate-ingress besteffort flowblind`. tcpdump on b's veth records
# every inbound arrival (ns, frame length) just before the ingress hook; `tc -s -j` reads CAKE's capacity
# estimate after each phase. Phases (bursts of 1400-byte IP datagrams every 10 ms, 3 s each):
# 3, 6, then 2 packets a burst. Output: OUT/ (arrivals.pcap, est.txt: "realtime_ns json" per read).
# Run as root:
#   linux.uml mem=512M rootfstype=hostfs rootflags=/ rw init=$PWD/scripts/uml/cake-autorate.sh \
#     OUT=/tmp/cake-autorate con=null con0=fd:0,fd:1 </dev/null
# The simulator's side: crates/sim/tests/qdisc_cake.rs, autorate_estimate_as_linux_on_its_arrivals.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t tmpfs tmp /run
HERE=$(dirname "$0")
OUT=${OUT:-/tmp/cake-autorate}
mkdir -p "$OUT"
{
for m in veth ifb sch_ingress cls_matchall act_mirred sch_cake; do insmod "$(find /usr/lib/uml/modules -name "$m.ko*" | head -n 1)"; done
ip netns add a; ip netns add b
for n in a b; do ip netns exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1; done
ip link add va netns a type veth peer name vb netns b
ip -n a addr add 10.9.0.1/24 dev va; ip -n b addr add 10.9.0.2/24 dev vb
for n in a b; do ip -n $n link set lo up; done
ip -n a link set va up; ip -n b link set vb up
ip -n b link add ifb0 type ifb; ip -n b link set ifb0 up
T="ip netns exec b tc"
$T qdisc add dev ifb0 root cake bandwidth 1mbit autorate-ingress besteffort flowblind
$T qdisc add dev vb handle ffff: ingress
$T filter add dev vb parent ffff: matchall action mirred egress redirect dev ifb0
# every inbound packet reaches the ingress hook and so CAKE's estimator: all of them recorded
ip netns exec b tcpdump -i vb -Q in -n -w "$OUT/arrivals.pcap" --time-stamp-precision=nano -B 8192 2>/dev/null &
TD=$!
sleep 2
ip netns exec a ping -c 1 -W 1 10.9.0.2 >/dev/null 2>&1
sleep 1
: > "$OUT/est.txt"
for per in 3 6 2; do
  ip netns exec a python3 "$HERE/bursts.py" 300 $per 10 1400
  echo "$(date +%s%N) $($T -s -j qdisc show dev ifb0)" >> "$OUT/est.txt"
done
sleep 1
kill -INT $TD; wait $TD
$T -s qdisc show dev ifb0 >> "$OUT/tc.txt"
} > "$OUT/log.txt" 2>&1
echo o > /proc/sysrq-trigger
poweroff -f
