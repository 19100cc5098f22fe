#!/bin/sh
# Linux's own sch_cake on UDP bursts, in Debian's user-mode Linux (apt-get install user-mode-linux;
# shared/testbed-notes.md): two namespaces over a veth, `cake bandwidth 2mbit besteffort flowblind`
# on a's egress, BURSTS bursts of PER packets of SIZE IP bytes GAP ms apart from a (bursts.py), then
# `tc -s qdisc` (its drops) into /tmp/uml-cake-BURSTS-PER-GAP-SIZE.txt. Run as root from anywhere:
#   linux.uml mem=512M rootfstype=hostfs rootflags=/ rw init=$PWD/scripts/uml/cake-bursts.sh \
#     BURSTS=60 PER=30 GAP=150 SIZE=900 con=null con0=fd:0,fd:1 </dev/null
# The simulator's side: crates/sim/tests/qdisc_cake.rs, cobalt_drops_in_bursts_as_linux.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t tmpfs tmp /run
HERE=$(dirname "$0")
OUT=/tmp/uml-cake-${BURSTS:-60}-${PER:-30}-${GAP:-150}-${SIZE:-900}.txt
{
for m in veth sch_cake; do insmod "$(find /usr/lib/uml/modules -name "$m.ko*" | head -n 1)"; done
ip netns add a; ip netns add b
ip link add va netns a type veth peer name vb netns b
ip -n a addr add 10.9.0.1/24 dev va; ip -n b addr add 10.9.0.2/24 dev vb
ip -n a link set va up; ip -n b link set vb up; ip -n a link set lo up; ip -n b link set lo up
ip netns exec a tc qdisc add dev va root cake bandwidth 2mbit besteffort flowblind
ip netns exec a ping -c 1 -W 1 10.9.0.2 >/dev/null 2>&1
ip netns exec a python3 "$HERE/bursts.py" ${BURSTS:-60} ${PER:-30} ${GAP:-150} ${SIZE:-900}
sleep 1
ip netns exec a tc -s qdisc show dev va
} > "$OUT" 2>&1
echo o > /proc/sysrq-trigger
poweroff -f
