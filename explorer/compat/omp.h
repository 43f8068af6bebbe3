// omp.h — OpenMP's runtime calls for the explorer's single-threaded WebAssembly build.
// The sources are compiled with -fopenmp-simd: `#pragma omp simd` still vectorises (WebAssembly
// SIMD, -msimd128) and every `#pragma omp parallel` is ignored, so the code runs as one thread
// and these calls answer for a team of one.
#pragma once

inline int omp_get_max_threads() {
  return 1;
}
inline int omp_get_num_threads() {
  return 1;
}
inline int omp_get_thread_num() {
  return 0;
}
inline int omp_in_parallel() {
  return 0;
}
