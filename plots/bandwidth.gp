# Bandwidth versus the working set per core: the per-level points (one
# measurement per cache level) as markers, never joined, the working-set
# staircase as a line; filled markers for all threads, open for one;
# error bars from the median's interval; each cache's size per core
# (a shared cache's share) as a grey dashed line, and where the
# measured bandwidth falls as a dotted one.
# Variables: datafile, title, nseries, label[], series_lt[], series_pt[],
# series_tag[] (1 per level, 2 staircase), ncaches, cache_bytes[],
# cache_label[] (sizes as reported), ndrops, drop_bytes[], drop_label[]
# (where the one-thread staircase falls by over a quarter: the levels as
# measured).  Data columns: bytes_per_core gbps ci_low ci_high.
set title title
set logscale x 2
set format x '%.0b %BB'
set xlabel 'working set per core (bytes)' offset 0,0.6
set ylabel 'bandwidth (GB/s)'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxcols 3 font ',10'
do for [j=1:ncaches] {
  set arrow from cache_bytes[j], graph 0 to cache_bytes[j], graph 1 \
    nohead dt 2 lc rgb '#777777'
  set label cache_label[j] at cache_bytes[j], graph 0.97 \
    rotate by 90 right offset -0.8,0 textcolor rgb '#555555' font ',9'
}
do for [j=1:ndrops] {
  set arrow from drop_bytes[j], graph 0 to drop_bytes[j], graph 1 \
    nohead dt 3 lw 1.5 lc rgb '#D55E00'
  set label drop_label[j] at drop_bytes[j], graph 0.03 \
    rotate by 90 left offset 1.2,0 textcolor rgb '#A04000' font ',9'
}
level(i, v) = series_tag[i] == 1 ? v : NaN
stair(i, v) = series_tag[i] == 1 ? NaN : v
plot for [i=1:nseries] datafile index (i-1) \
       using 1:(level(i, $2)):(level(i, $3)):(level(i, $4)) \
       with yerrorbars lt series_lt[i] pt series_pt[i] ps 1.6 \
       title (series_tag[i] == 1 ? label[i] : ''), \
     for [i=1:nseries] datafile index (i-1) \
       using 1:(stair(i, $2)):(stair(i, $3)):(stair(i, $4)) \
       with yerrorlines lt series_lt[i] pt series_pt[i] ps 1 lw 1.5 \
       title (series_tag[i] == 1 ? '' : label[i])
