// CLBlast's strided batched GEMM (issue 43's comparison), host to host from pinned memory: A and
// B written from a mapped CL_MEM_ALLOC_HOST_PTR buffer, GemmStridedBatched, C read back into one,
// all on one in-order queue; and the kernel alone on the device. Medians of REPS after one
// warm-up; a sample of problems checked against OpenBLAS (a difference past rounding, 64 of the
// real type's epsilon per unit of n max|C|, fails the run). One JSON line per case.
//
//   clblast_batch CASES REPS [DEVICE]     e.g. clblast_batch s:64:20000,z:256:2000 7 NVIDIA
//
// CASES: PRECISION:N:COUNT, PRECISION s, d, c or z (operands drawn as batch_bench's); DEVICE: a
// substring of "platform / device" (default NVIDIA).
#include <clblast.h>

#include <CL/opencl.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batch_cases.hpp"
#include "batch_element.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

cl::Device find_device(const std::string& name) {
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (const cl::Platform& p : platforms) {
    std::vector<cl::Device> devices;
    p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    for (const cl::Device& d : devices)
      if ((p.getInfo<CL_PLATFORM_NAME>() + " / " + d.getInfo<CL_DEVICE_NAME>()).find(name) !=
          std::string::npos)
        return d;
  }
  std::fprintf(stderr, "no OpenCL device matches %s\n", name.c_str());
  std::exit(2);
}

bool g_mismatch = false;

template <class T>
std::string run_case(const cl::Device& device, int64_t n, int64_t count, int reps) {
  cl::Context context(device);
  cl::CommandQueue queue(context, device);
  const size_t elements = static_cast<size_t>(n * n * count), bytes = elements * sizeof(T);
  // Pinned host memory, mapped for the run, and the device's buffers.
  cl::Buffer host_a(context, CL_MEM_ALLOC_HOST_PTR, bytes),
      host_b(context, CL_MEM_ALLOC_HOST_PTR, bytes), host_c(context, CL_MEM_ALLOC_HOST_PTR, bytes);
  T* a = static_cast<T*>(
      queue.enqueueMapBuffer(host_a, CL_TRUE, CL_MAP_WRITE | CL_MAP_READ, 0, bytes));
  T* b = static_cast<T*>(
      queue.enqueueMapBuffer(host_b, CL_TRUE, CL_MAP_WRITE | CL_MAP_READ, 0, bytes));
  T* c = static_cast<T*>(
      queue.enqueueMapBuffer(host_c, CL_TRUE, CL_MAP_WRITE | CL_MAP_READ, 0, bytes));
  std::mt19937 rng(static_cast<unsigned>(n * 7 + count));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (size_t i = 0; i < elements; ++i)
    a[i] = Element<T>::random(dist, rng), b[i] = Element<T>::random(dist, rng);
  cl::Buffer da(context, CL_MEM_READ_WRITE, bytes), db(context, CL_MEM_READ_WRITE, bytes),
      dc(context, CL_MEM_READ_WRITE, bytes);
  const auto size = static_cast<size_t>(n), stride = size * size;
  cl_command_queue q = queue();
  const auto gemm = [&] {
    const auto status = clblast::GemmStridedBatched<T>(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, size, size,
        size, T(1), da(), 0, size, stride, db(), 0, size, stride, T(0), dc(), 0, size, stride,
        static_cast<size_t>(count), &q);
    if (status != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "CLBlast GemmStridedBatched failed: %d\n", static_cast<int>(status));
      std::exit(1);
    }
  };
  std::vector<double> host, kernel;
  for (int r = -1; r < reps; ++r) {
    auto t0 = Clock::now();
    queue.enqueueWriteBuffer(da, CL_FALSE, 0, bytes, a);
    queue.enqueueWriteBuffer(db, CL_FALSE, 0, bytes, b);
    gemm();
    queue.enqueueReadBuffer(dc, CL_FALSE, 0, bytes, c);
    queue.finish();
    if (r >= 0) host.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    gemm();
    queue.finish();
    if (r >= 0) kernel.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  // A sample of problems against OpenBLAS.
  std::vector<T> want(stride);
  double worst = 0, scale = 0;
  for (int64_t i : {int64_t{0}, count / 2, count - 1}) {
    openblas_gemm(n, T(1), a + i * n * n, b + i * n * n, T(0), want.data());
    for (size_t e = 0; e < stride; ++e) {
      scale = std::max(scale, static_cast<double>(std::abs(want[e])));
      const auto d = static_cast<double>(std::abs(c[i * n * n + e] - want[e]));
      if (!std::isnan(worst) && !(d <= worst)) worst = d;  // a NaN, once seen, stays
    }
  }
  const double tolerance =
      64 * static_cast<double>(std::numeric_limits<typename Element<T>::Real>::epsilon()) *
      static_cast<double>(n) * scale;
  if (!(worst <= tolerance)) {
    std::fprintf(stderr, "MISMATCH %c n %lld count %lld: %g (tolerance %g)\n", Element<T>::letter,
                 static_cast<long long>(n), static_cast<long long>(count), worst, tolerance);
    g_mismatch = true;
  }
  for (auto [buffer, p] : {std::pair{&host_a, a}, std::pair{&host_b, b}, std::pair{&host_c, c}})
    queue.enqueueUnmapMemObject(*buffer, p);
  queue.finish();
  std::ostringstream json;
  json << "{\"precision\": \"" << Element<T>::letter << "\", \"n\": " << n
       << ", \"count\": " << count << ", \"reps\": " << reps
       << ", \"clblast_pinned_s\": " << median(host) << ", \"clblast_device_s\": " << median(kernel)
       << ", \"max_abs_diff\": " << worst << "}";
  return json.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cases = argc > 1 ? argv[1] : "s:64:2000";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const cl::Device device = find_device(argc > 3 ? argv[3] : "NVIDIA");
  for (const auto& [p, n, count] : parse_batch_cases(cases, "sdcz")) {
    const std::string json = p == 's'   ? run_case<float>(device, n, count, reps)
                             : p == 'd' ? run_case<double>(device, n, count, reps)
                             : p == 'c' ? run_case<std::complex<float>>(device, n, count, reps)
                                        : run_case<std::complex<double>>(device, n, count, reps);
    std::printf("%s\n", json.c_str());
    std::fflush(stdout);
  }
  return g_mismatch ? 1 : 0;
}
