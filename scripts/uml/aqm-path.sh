#!/bin/sh
# Linux 6.1's own queue disciplines on the mitigations study's fixed path, inside Debian's user-mode
# Linux (apt-get install user-mode-linux; shared/testbed-notes.md). Four namespaces in one kernel:
#   srv --veth-- rtr --veth-- dly --veth-- cli
# rtr's egress towards cli is the bottleneck: HTB at RATE (IP bytes: the class rate is RATE x
# 1514/1500, the veth frame's 14 B of Ethernet header), the discipline as its child; dly adds 20 ms
# each way (netem, after the bottleneck, where a packet's socket is long orphaned, so TSQ at srv
# sees only its own veth). Offloads off (MTU-sized frames, MSS 1448). Per discipline: audio (80-B
# IP packets every 20 ms, aqm_flows.py) from srv to cli, and PRE s later a CUBIC download of SIZE
# bytes beside it (UML's own TCP, tcp_no_metrics_save = 1), REPS times in turn; before the runs
# 30 idle UDP round trips and a lone download through pfifo (the path's timing fidelity). Results:
# OUT (one JSON, aqm_flows.py combine).
# Run as root (scripts/uml_aqm.py does this and compares the simulator):
#   linux.uml mem=1024M rootfstype=hostfs rootflags=/ rw init=$PWD/scripts/uml/aqm-path.sh \
#     OUT=/tmp/uml-aqm.json DISCS=pfifo,codel SIZE=8000000 REPS=3 con=null con0=fd:0,fd:1 </dev/null
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t tmpfs tmp /run
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
OUT=${OUT:-/tmp/uml-aqm.json}
SIZE=${SIZE:-8000000}
PRE=${PRE:-2}
# comma-separated: the kernel's command line splits its arguments at spaces
DISCS=$(echo "${DISCS:-pfifo,red,codel,fq_codel,pie,cake,cake_flowblind,cake_root}" | tr , ' ')
LONE=${LONE-1}
REPS=${REPS:-3}
# HTB's bucket: tc's default (rate/HZ + MTU, with UML's 1 ns clock one MTU) loses rate whenever UML's
# timer fires a packet's time late; HTB_BURST bytes of tokens let the class catch up after a late
# wake-up (3 frames by default: 13.6 ms at 3.3 Mbit/s), at the cost of sending that much back to
# back after an idle period
HTB_BURST=${HTB_BURST:-4542}
RATE_KBIT=${RATE_KBIT:-3300}
CAKE_KBIT=${CAKE_KBIT:-3135}
W=$(mktemp -d /tmp/uml-aqm.XXXXXX)
wire() { echo $(( $1 * 1514 / 1500 ))kbit; }  # an IP-byte rate as the veth frame's rate
LOG=$W/log.txt
{
for m in veth sch_htb sch_netem sch_codel sch_fq_codel sch_pie sch_red sch_cake; do
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
bottleneck() {  # $1: the child's tc arguments; $2 = root: the discipline alone, without HTB
  ip netns exec rtr tc qdisc del dev r1 root 2>/dev/null
  if [ "$2" = root ]; then ip netns exec rtr tc qdisc add dev r1 root handle 10: $1; return; fi
  ip netns exec rtr tc qdisc add dev r1 root handle 1: htb default 1
  ip netns exec rtr tc class add dev r1 parent 1: classid 1:1 htb rate "$(wire $RATE_KBIT)" ceil "$(wire $RATE_KBIT)" \
    burst $HTB_BURST cburst $HTB_BURST
  ip netns exec rtr tc qdisc add dev r1 parent 1:1 handle 10: $1
}
child() {
  case $1 in
    pfifo) echo "pfifo limit 500" ;;
    codel) echo "codel limit 500" ;;
    fq_codel) echo "fq_codel limit 500" ;;
    pie) echo "pie limit 500" ;;
    # the study's RED (5 / 15 packets, max_p 0.1) in bytes of 1500-B packets; burst 55 gives
    # Wlog 9 (w = 1/512, tc_red_eval_ewma), the nearest to the study's 0.002; no gentle in Linux
    red) echo "red limit 750000 min 7500 max 22500 avpkt 1500 burst 55 probability 0.1 bandwidth $(wire $RATE_KBIT)" ;;
    cake) echo "cake bandwidth $(wire $CAKE_KBIT) memlimit 750000" ;;
    cake_flowblind) echo "cake bandwidth $(wire $CAKE_KBIT) memlimit 750000 besteffort flowblind" ;;
    cake_root) echo "cake bandwidth $(wire $CAKE_KBIT) memlimit 750000" ;;  # the root qdisc, no HTB
  esac
}
run() {  # $1: name, $2: child discipline, $3: audio (1/0)
  D=$W/$1; mkdir -p "$D"
  case $2 in *_root) bottleneck "$(child "$2")" root ;; *) bottleneck "$(child "$2")" ;; esac
  echo "{\"tc\": \"$(child "$2")\", \"htb_rate\": \"$(wire $RATE_KBIT)\", \"htb_burst\": $HTB_BURST}" > "$D/setup.json"
  ip netns exec srv cat /proc/net/snmp /proc/net/netstat > "$D/mib0.txt"
  ip netns exec cli $PY "$HERE/aqm_flows.py" recv "$D/recv.json" 120 &
  RP=$!
  sleep 1
  if [ "$3" = 1 ]; then PRE_S=$PRE; else PRE_S=-1; fi
  ip netns exec srv $PY "$HERE/aqm_flows.py" send 10.0.3.2 "$SIZE" "$PRE_S" 1 > "$D/send.json" &
  SP=$!
  # SS=1: the sender's tcp_info (ss -ti) every 0.2 s, for a diagnosis (it costs UML some CPU)
  while [ -n "$SS" ] && kill -0 $SP 2>/dev/null; do
    { date +%s.%N; ip netns exec srv ss -tinH dst 10.0.3.2 dport = 5001; } >> "$D/ss.txt"; sleep 0.2; done
  wait $SP
  wait $RP
  ip netns exec rtr tc -s -j qdisc show dev r1 > "$D/qdisc.json"
  ip netns exec rtr tc -s -j class show dev r1 > "$D/class.json"
  ip netns exec srv cat /proc/net/snmp /proc/net/netstat > "$D/mib1.txt"
}
date -u +%FT%TZ > $W/date.txt
uname -r > $W/uname.txt
{ ip netns exec srv sysctl net.ipv4.tcp_rmem net.ipv4.tcp_wmem net.ipv4.tcp_congestion_control \
  net.ipv4.tcp_limit_output_bytes net.ipv4.tcp_adv_win_scale; sysctl net.core.rmem_max; } > $W/sysctl.txt
bottleneck "pfifo limit 500"
ip netns exec cli $PY "$HERE/aqm_flows.py" echo 3 &
sleep 0.5
ip netns exec srv $PY "$HERE/aqm_flows.py" rtt 10.0.3.2 30 > $W/ping.txt
wait
[ -n "$LONE" ] && run lone pfifo 0
# round robin, so that a slow spell of the host falls on every discipline alike
for r in $(seq 1 $REPS); do for d in $DISCS; do run "$d-$r" "$d" 1; done; done
} > $LOG 2>&1
$PY -c "import json,sys; d='$W'; json.dump({'date': open(d+'/date.txt').read().strip(), 'kernel': open(d+'/uname.txt').read().strip(),
 'sysctl': open(d+'/sysctl.txt').read().split('\n'), 'rtt_ms': json.load(open(d+'/ping.txt')), 'log': open(d+'/log.txt').read(),
 'size': $SIZE, 'reps': $REPS, 'pre_s': $PRE, 'htb_burst': $HTB_BURST, 'rate_kbit': $RATE_KBIT, 'cake_kbit': $CAKE_KBIT}, open(d+'/meta.json','w'))"
$PY "$HERE/aqm_flows.py" combine $W "$OUT" && rm -rf "$W"
echo o > /proc/sysrq-trigger
poweroff -f
