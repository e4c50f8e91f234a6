# R's crossprod(A) (BLAS dsyrk) and A %*% B (dgemm) on fixed random matrices, written to a file
# in full precision; `compare` checks two such files agree to a relative 1e-12.
#   Rscript r_dropin.R run OUT | compare REF OUT
args <- commandArgs(trailingOnly = TRUE)
if (args[1] == "run") {
  set.seed(7)
  a <- matrix(rnorm(1024 * 1024), 1024)
  b <- matrix(rnorm(1024 * 1024), 1024)
  saveRDS(list(cross = crossprod(a), prod = a %*% b), args[2])
} else {
  ref <- readRDS(args[2]); out <- readRDS(args[3])
  ok <- TRUE
  for (name in c("cross", "prod")) {
    d <- max(abs(ref[[name]] - out[[name]])) / max(abs(ref[[name]]))
    cat(sprintf("%s: relative difference %.2e\n", name, d))
    if (!(d < 1e-12)) ok <- FALSE
  }
  if (!ok) quit(status = 1)
}
