# Bandwidth versus the working set per core: the per-level points (one
# measurement per cache level) as markers, never joined, the working-set
# staircase as a line; colour per kernel, marker per kind and machine,
# filled for all threads, open for one; error bars from the median's
# interval; each cache's size per core as reported (a shared cache's
# share) as a grey line and where the measured bandwidth falls as an
# orange one, in the machine's mark dash, each tagged at the top, in a
# band of rows above the lines so that no tag prints over another or is
# crossed by a line, each kind named in the key.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_dt[], series_tag[] (1 per level, 2 staircase); mark_rows;
# ncaches, cache_bytes[], cache_tag[], cache_dt[], cache_row[]; ndrops,
# drop_bytes[], drop_tag[], drop_dt[], drop_row[]; nmarkkeys, markkey[],
# markkey_dt[], markkey_drop[]; the x range and tics are set.  Data
# columns: bytes_per_core gbps ci_low ci_high.
set title title
set logscale x 2
set xtics nomirror
set xlabel 'working set per core (bytes)'
set ylabel 'bandwidth (GB/s)'
set yrange [0:*]
# room above the data for the rows of tags
set offsets 0, 0, graph (0.06 + 0.055 * mark_rows), 0
set grid
set key outside right top vertical Left reverse font ',10' spacing 1.1
row_y(r) = 0.97 - 0.05 * r
# every line ends under the band of tags: no line crosses a tag
line_top = row_y(mark_rows - 1) - 0.03
do for [j=1:ncaches] {
  set arrow from cache_bytes[j], graph 0 to cache_bytes[j], graph line_top \
    nohead dt cache_dt[j] lw 1.2 lc rgb '#777777'
  set label cache_tag[j] at cache_bytes[j], graph row_y(cache_row[j]) \
    center textcolor rgb '#444444' font ',9' front
}
do for [j=1:ndrops] {
  set arrow from drop_bytes[j], graph 0 to drop_bytes[j], graph line_top \
    nohead dt drop_dt[j] lw 1.5 lc rgb '#D55E00'
  set label drop_tag[j] at drop_bytes[j], graph row_y(drop_row[j]) \
    center textcolor rgb '#A04000' font ',9' front
}
level(i, v) = series_tag[i] == 1 ? v : NaN
stair(i, v) = series_tag[i] == 1 ? NaN : v
plot for [i=1:nseries] datafile index (i-1) \
       using 1:(level(i, $2)):(level(i, $3)):(level(i, $4)) \
       with yerrorbars lt series_lt[i] pt series_pt[i] dt 1 ps 1.6 \
       title (series_tag[i] == 1 ? label[i] : ''), \
     for [i=1:nseries] datafile index (i-1) \
       using 1:(stair(i, $2)):(stair(i, $3)):(stair(i, $4)) \
       with yerrorlines lt series_lt[i] pt series_pt[i] dt series_dt[i] \
       ps 1 lw 1.5 title (series_tag[i] == 1 ? '' : label[i]), \
     for [j=1:nmarkkeys] NaN with lines dt markkey_dt[j] lw 1.5 \
       lc rgb (markkey_drop[j] ? '#D55E00' : '#777777') title markkey[j]
