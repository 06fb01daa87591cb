#!/usr/bin/env Rscript
# Builds Sources/MeridianDashboard/Static/basemap.json, the dashboard's offline
# basemap: world country outlines and coastlines at 1:110 million.
#
# Source: Natural Earth (https://www.naturalearthdata.com/), "Admin 0 - Countries"
# and "Coastline" at 1:110m, public domain ("All versions of Natural Earth raster +
# vector map data found on this website are in the public domain"), as carried by
# Debian's r-cran-rnaturalearthdata package (CC0 packaging; datasets countries110
# and coastline110, sp objects).
#
# Run once, from the repository root, after `apt-get install r-cran-rnaturalearthdata`:
#   Rscript Tools/basemap/make-basemap.R
# The output is committed; the server serves it at /dashboard/basemap.json.
#
# Format (compact JSON): {"source", "licence", "scale": 100, "countries": [rings],
# "coastlines": [lines]}. A ring or line is a flat array of integers in 1/100 degree:
# the first longitude and latitude, then the difference of each later point from
# the one before (dlon, dlat). Consecutive points equal after rounding are dropped.

suppressMessages(library(sp))
data(list = c("countries110", "coastline110"), package = "rnaturalearthdata")

encode <- function(coords, min_points) {
  q <- round(coords * 100)
  keep <- c(TRUE, rowSums(abs(diff(q))) > 0)
  q <- q[keep, , drop = FALSE]
  if (nrow(q) < min_points) return(NULL)
  d <- rbind(q[1, ], diff(q))
  paste0("[", paste(as.integer(t(d)), collapse = ","), "]")
}

rings <- unlist(lapply(countries110@polygons, function(p) {
  unlist(lapply(p@Polygons, function(r) encode(r@coords, 4)))
}))
lines <- unlist(lapply(coastline110@lines, function(l) {
  unlist(lapply(l@Lines, function(r) encode(r@coords, 2)))
}))

out <- file("Sources/MeridianDashboard/Static/basemap.json", "w")
cat('{"source":"Natural Earth 1:110m Admin 0 Countries and Coastline, via Debian r-cran-rnaturalearthdata",',
    '"licence":"public domain","scale":100,\n"countries":[', paste(rings, collapse = ",\n"),
    '],\n"coastlines":[', paste(lines, collapse = ",\n"), "]}\n", file = out, sep = "")
close(out)
cat(sprintf("wrote %d country rings and %d coastlines\n", length(rings), length(lines)))
