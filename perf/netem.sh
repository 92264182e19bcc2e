# shellcheck shell=bash
# perf/netem.sh: the `tc netem` backend of the WAN links, selected with
# PERF_EMULATOR=netem (lib.sh sources this file). Each link is then a plain
# veth pair; direction ab is shaped by a netem qdisc at the left end's
# egress, ba at the right end's. wan_set takes the same flags as
# `wanem set` and, like it, changes only what it names: the settings
# of each direction are kept in $PERF_STATE/netem/LINK.DIR and the whole
# qdisc is replaced from them. Mapping:
#   --delay D --jitter J   delay D J (netem reorders unless rate is set)
#   --loss P               loss random P*100%
#   --burst p,r[,bad[,good]]  loss gemodel p r 1-h 1-k (all *100%)
#   --rate R               rate R
#   --cut / --restore      loss 100% on top of the rest / back to it
#   --backlog              ignored (netem has a packet limit, not a time)

# netem_check: fail clearly where the kernel has no sch_netem. The probe
# runs on a veth pair in a scratch namespace of our own.
netem_check() {
	command -v tc >/dev/null || die "PERF_EMULATOR=netem needs tc (iproute2)"
	local n out rc=0
	n=$(ns netem-probe)
	ip netns add "$n"
	out=$(ip netns exec "$n" sh -c 'ip link add probe0 type veth peer name probe1 && ip link set probe0 up && tc qdisc add dev probe0 root netem delay 1ms' 2>&1) || rc=$?
	ip netns del "$n"
	[ $rc = 0 ] || die "this kernel has no sch_netem: use PERF_EMULATOR=wanem (default) (tc said: ${out//$'\n'/ })"
}

# netem_link NAME LEFT_NS LEFT_IF LEFT_ADDR RIGHT_NS RIGHT_IF RIGHT_ADDR
netem_link() {
	local name=$1 lns=$2 lif=$3 laddr=$4 rns=$5 rif=$6 raddr=$7
	veth "$lns" "$lif" "$rns" "$rif"
	nsx "$lns" ip addr add "$laddr/24" dev "$lif"
	nsx "$rns" ip addr add "$raddr/24" dev "$rif"
	mkdir -p "$PERF_STATE/netem"
	echo "$lns $lif" >"$PERF_STATE/netem/$name.ab.dev"
	echo "$rns $rif" >"$PERF_STATE/netem/$name.ba.dev"
	: >"$PERF_STATE/netem/$name.ab"
	: >"$PERF_STATE/netem/$name.ba"
}

netem_has() { [ -f "$PERF_STATE/netem/$1.ab.dev" ]; }

# netem_set NAME ARGS...: wan_set for a netem link.
netem_set() {
	local name=$1; shift
	local dirs="ab ba" d
	local -a edits=()
	while [ $# -gt 0 ]; do
		case $1 in
		--dir) case $2 in both) dirs="ab ba" ;; ab | ba) dirs=$2 ;; *) die "netem: bad --dir $2" ;; esac; shift ;;
		--reset) edits+=(reset) ;;
		--delay | --jitter | --loss | --burst | --rate) edits+=("${1#--}=$2"); shift ;;
		--backlog) log "netem: --backlog ignored"; shift ;;
		--cut) edits+=(cut=1) ;;
		--restore) edits+=(cut=0) ;;
		*) die "netem: unknown wan_set flag $1" ;;
		esac
		shift
	done
	for d in $dirs; do
		local f=$PERF_STATE/netem/$name.$d e
		for e in "${edits[@]}"; do
			if [ "$e" = reset ]; then : >"$f"; continue; fi
			grep -v "^${e%%=*}=" "$f" >"$f.new" || true
			echo "$e" >>"$f.new"
			mv "$f.new" "$f"
		done
		netem_apply "$name" "$d"
	done
}

# netem_args FILE: the netem options for the settings in FILE.
netem_args() {
	awk -F= '
		function pct(x) { return sprintf("%g%%", x * 100) }
		{ v[$1] = $2 }
		END {
			out = ""
			if (v["delay"] != "" || v["jitter"] != "") out = out " delay " (v["delay"] != "" ? v["delay"] : "0ms") (v["jitter"] != "" ? " " v["jitter"] : "")
			if (v["cut"] == 1) out = out " loss random 100%"
			else if (v["burst"] != "" && v["burst"] != "off") {
				n = split(v["burst"], b, ",")
				out = out " loss gemodel " pct(b[1]) " " pct(b[2]) " " pct(n >= 3 ? b[3] : 1) " " pct(n >= 4 ? b[4] : 0)
			} else if (v["loss"] != "" && v["loss"] + 0 > 0) out = out " loss random " pct(v["loss"])
			if (v["rate"] != "") out = out " rate " v["rate"]
			print out
		}' "$1"
}

netem_apply() {
	local name=$1 d=$2 n dev args
	read -r n dev <"$PERF_STATE/netem/$name.$d.dev"
	args=$(netem_args "$PERF_STATE/netem/$name.$d")
	# shellcheck disable=SC2086 # args are words
	nsx "$n" tc qdisc replace dev "$dev" root netem limit 10000 $args
}

netem_show() {
	local d n dev
	for d in ab ba; do
		read -r n dev <"$PERF_STATE/netem/$1.$d.dev"
		echo "$1 $d ($n $dev): $(nsx "$n" tc -s qdisc show dev "$dev" | tr '\n' ' ')"
	done
}
