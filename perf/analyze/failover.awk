# failover.awk: interruptions of a packet stream around link cuts.
# Input 1 (cuts): "i t_cut t_restore" per cut. Input 2 (samples, sorted by
# seq): "seq send_time recv_time rtt_ms" of every answered packet.
# For each cut: the gap in send times between the last answered packet
# sent before the cut and the first one after it, less one sending interval
# (0 when nothing was lost), and the packets lost in it; then the largest
# gap while failing back (after the restore, before the next cut), and all
# packets lost from the cut to the next cut.
# Output: "i interruption_ms lost failback_interruption_ms lost_total".
FNR == NR { nc++; ct[nc] = $2; rt[nc] = $3; next }
{ ns++; sq[ns] = $1; st[ns] = $2 }
END {
	# The sending interval: the median spacing of consecutive sequence numbers.
	m = 0
	for (k = 2; k <= ns; k++) if (sq[k] == sq[k-1] + 1) d[++m] = st[k] - st[k-1]
	for (i = 2; i <= m; i++) { x = d[i]; for (j = i - 1; j >= 1 && d[j] > x; j--) d[j+1] = d[j]; d[j+1] = x }
	iv = m ? d[int((m + 1) / 2)] : 0.005
	printf "# interval_ms %.3f\n", iv * 1000
	for (c = 1; c <= nc; c++) {
		end = (c < nc) ? ct[c+1] : 1e18
		gap = 0; lost = 0; fb = 0; tot = 0
		for (k = 2; k <= ns; k++) {
			if (st[k] <= ct[c] || st[k] >= end) continue
			g = st[k] - st[k-1] - iv; l = sq[k] - sq[k-1] - 1
			if (g < 0 || l == 0) g = 0
			tot += l
			if (st[k-1] <= ct[c]) { gap = g; lost = l }
			else if (st[k-1] >= rt[c] && g > fb) fb = g
		}
		printf "%d %.1f %d %.1f %d\n", c, gap * 1000, lost, fb * 1000, tot
	}
}
