# The batch sweep in three panels: prefill and train throughput
# (examples/s) and decode throughput (tokens/s) against batch size, each
# on its own axis, with the median's confidence interval, the peak
# (filled) and the knee (open ring); and latency per step against batch
# size for every mode.  Both axes logarithmic; colour per mode, marker
# and dash per machine.  One key for the three panels, in a band of its
# own under them (every series once, three columns).
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], series_tag[] (1 prefill, 2 decode, 3 train, 4 a workload),
# title_frac, canvas_h.  Data columns: batch_size examples_per_s ci_low
# ci_high is_peak is_knee latency_ms latency_ci_low latency_ci_high.
set multiplot title title
set logscale x 2
set logscale y
set xlabel 'batch size'
set grid
unset key
# the key's band: a row of 17 pixels per three entries
key_rows = ceil((nseries + 2) / 3.0)
key_frac = (17.0 * key_rows + 24) / canvas_h
panel_top = 1 - title_frac - 0.05
panel_bottom = key_frac + 0.1
set tmargin at screen panel_top
set bmargin at screen panel_bottom
left(t) = 0.07 + (t - 1) * 0.33
# panel 1: examples/s (prefill, tag 1; train, tag 3; a workload, tag 4);
# panel 2: decode (tag 2).  A panel with no series says so instead of
# plotting nothing.
panel(i) = series_tag[i] == 2 ? 2 : 1
on(i, t, v) = panel(i) == t ? v : NaN
have1 = 0; have2 = 0; have3 = 0; have4 = 0
do for [i=1:nseries] {
  if (series_tag[i] == 1) { have1 = 1 }
  if (series_tag[i] == 2) { have2 = 1 }
  if (series_tag[i] == 3) { have3 = 1 }
  if (series_tag[i] == 4) { have4 = 1 }
}
first_panel = (have1 ? 'prefill' : '') . (have1 && have3 ? ' and ' : '') . \
              (have3 ? 'train' : '') . \
              ((have1 || have3) && have4 ? ' and ' : '') . \
              (have4 ? 'workload' : '')
do for [t=1:2] {
  set lmargin at screen left(t)
  set rmargin at screen left(t) + 0.25
  set title (t == 1 ? (strlen(first_panel) ? first_panel : 'prefill') : 'decode')
  set ylabel (t == 1 ? 'throughput (examples/s)' : 'throughput (tokens/s)')
  if ((t == 1 && !(have1 || have3 || have4)) || (t == 2 && !have2)) {
    set xrange [1:16]; set yrange [1:10]
    set label 99 'not measured' at graph 0.5, graph 0.5 center
    plot 1/0 notitle
    unset label 99
    set autoscale xy
  } else {
    plot for [i=1:nseries] datafile index (i-1) \
           using 1:(on(i, t, $2)):(on(i, t, $3)):(on(i, t, $4)) \
           with yerrorlines lt series_lt[i] pt series_pt[i] \
           dt series_dt[i] ps 0.9 title label[i], \
         for [i=1:nseries] datafile index (i-1) \
           using 1:(on(i, t, $5 > 0 ? $2 : NaN)) with points pt 7 ps 2.2 \
           lc rgb '#000000' notitle, \
         for [i=1:nseries] datafile index (i-1) \
           using 1:(on(i, t, $6 > 0 ? $2 : NaN)) with points pt 6 ps 3 lw 2 \
           lc rgb '#000000' notitle
  }
}
set lmargin at screen left(3)
set rmargin at screen left(3) + 0.25
set title 'latency per step'
set ylabel 'latency (ms)'
plot for [i=1:nseries] datafile index (i-1) using 1:7:8:9 \
       with yerrorlines lt series_lt[i] pt series_pt[i] dt series_dt[i] \
       ps 0.9 title label[i]
# the key: every series once, the peak and the knee, in its own band
unset title
unset border
unset tics
unset grid
unset xlabel
unset ylabel
unset logscale
set xrange [0:1]
set yrange [0:1]
set lmargin at screen 0.02
set rmargin at screen 0.98
set tmargin at screen key_frac
set bmargin at screen 0.01
set key inside center center vertical maxrows key_rows Left reverse \
  font ',10' spacing 1.1 width 2
plot for [i=1:nseries] NaN with linespoints lt series_lt[i] \
       pt series_pt[i] dt series_dt[i] ps 0.9 title label[i], \
     NaN with points pt 7 ps 2.2 lc rgb '#000000' title 'peak', \
     NaN with points pt 6 ps 3 lw 2 lc rgb '#000000' title 'knee'
unset multiplot
