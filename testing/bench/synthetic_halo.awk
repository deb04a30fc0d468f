# A synthetic halo as CSV (x,y,z per line) for the bench smoke test on a
# fresh clone: N particles (default 3000), 80% in a Plummer body of scale
# 0.05 and 20% in an envelope of scale 0.5, drawn by inverting the
# enclosed mass fraction u: r = a / sqrt(u^(-2/3) - 1), u < 0.99.
#   awk -v N=3000 -f synthetic_halo.awk > halo.csv
BEGIN {
  if (N == "") N = 3000
  srand(5)
  for (i = 0; i < N; ++i) {
    a = i < 0.8 * N ? 0.05 : 0.5
    do { u = 0.99 * rand() } while (u <= 0)
    r = a / sqrt(u ^ (-2.0 / 3.0) - 1.0)
    cz = 2.0 * rand() - 1.0
    phi = 6.283185307179586 * rand()
    sz = sqrt(1.0 - cz * cz)
    printf "%.8g,%.8g,%.8g\n", r * sz * cos(phi), r * sz * sin(phi), r * cz
  }
}
