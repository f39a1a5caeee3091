# Bandwidth versus working-set size, one curve per profile and kernel, with
# each cache size marked by a dashed line.  Variables: datafile, title,
# nseries, label[], ncaches, cache_bytes[], cache_label[].  Data columns:
# bytes gbps.
set title title
set logscale x 2
set format x '%.0b %BB'
set xlabel 'working set'
set ylabel 'GB/s'
set yrange [0:*]
set grid
set key outside bottom center horizontal maxrows 4
do for [j=1:ncaches] {
  set arrow from cache_bytes[j], graph 0 to cache_bytes[j], graph 1 \
    nohead dt 2 lc rgb 'gray40'
  set label cache_label[j] at cache_bytes[j], graph 0.97 \
    rotate by 90 right offset -0.8,0 textcolor rgb 'gray40'
}
plot for [i=1:nseries] datafile index (i-1) using 1:2 \
       with linespoints lw 2 pt 7 lc i title label[i]
