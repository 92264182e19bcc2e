# failover.awk: interruptions of a packet stream around link cuts.
# Input 1 (cuts): "i t_cut t_restore" per cut. Input 2 (samples, sorted by
# seq): "seq send_time recv_time rtt_ms" of every answered packet.
# For each cut: the largest gap in send times between consecutive answered
# packets that starts between just before the cut (SLACK seconds: replies
# still in flight when the cut came are lost too) and the restore, less
# one sending interval, and the packets lost in it; this does not depend on
# exactly when the cut took effect. Then the largest gap that starts after
# the restore and ends before the next cut (failing back), and every packet
# lost from the cut to the next cut.
# Output: "i interruption_ms lost failback_interruption_ms lost_total".
BEGIN { if (SLACK == "") SLACK = 0.5 }
FNR == NR { nc++; ct[nc] = $2; rt[nc] = $3; next }
{ ns++; sq[ns] = $1; st[ns] = $2 }
END {
	# The sending interval: ping sends at a fixed rate, so the mean spacing
	# of sequence numbers over the whole stream.
	iv = (ns > 1 && sq[ns] > sq[1]) ? (st[ns] - st[1]) / (sq[ns] - sq[1]) : 0.005
	printf "# interval_ms %.3f\n", iv * 1000
	for (c = 1; c <= nc; c++) {
		end = (c < nc) ? ct[c+1] : 1e18
		gap = 0; lost = 0; fb = 0; tot = 0
		for (k = 2; k <= ns; k++) {
			if (st[k-1] < ct[c] - SLACK || st[k] >= end) continue
			g = st[k] - st[k-1] - iv; l = sq[k] - sq[k-1] - 1
			if (g < 0 || l == 0) g = 0
			if (st[k] > ct[c]) tot += l
			if (st[k-1] < rt[c]) { if (g > gap) { gap = g; lost = l } }
			else if (g > fb) fb = g
		}
		printf "%d %.1f %d %.1f %d\n", c, gap * 1000, lost, fb * 1000, tot
	}
}
