// The element types tandem computes in, as BLAS names them (s, d, c, z), and every fact that
// follows from one: its letter, its size, its real counterpart, whether it is complex and whether
// a device needs fp64 for it, the flops of one multiply-add, its routines' names. Code that
// differs by element type asks here, so that a new type is a row of these tables, not another
// copy of the code (docs/DESIGN.md).
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <iosfwd>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace tandem::detail {

// Real single and double, complex single and double. Each enumerator's value is its letter, so
// a map keyed by Precision lists them in the letters' order (c, d, s, z): the order a profile's
// sections are written and shown in.
enum class Precision : char { s = 's', d = 'd', c = 'c', z = 'z' };

// Every precision, in BLAS's order (s, d, c, z).
inline constexpr Precision kPrecisions[] = {Precision::s, Precision::d, Precision::c, Precision::z};
inline constexpr int kPrecisionCount = 4;

// A precision's place in kPrecisions: the index of its entry in a per-precision array.
constexpr int index_of(Precision p) {
  switch (p) {
    case Precision::s:
      return 0;
    case Precision::d:
      return 1;
    case Precision::c:
      return 2;
    case Precision::z:
      return 3;
  }
  return 0;
}

// Its letter: 's', 'd', 'c' or 'z'.
constexpr char letter(Precision p) { return static_cast<char>(p); }

constexpr bool is_complex(Precision p) { return p == Precision::c || p == Precision::z; }

// The precision of a complex type's real and imaginary parts; a real type is its own.
constexpr Precision real_of(Precision p) {
  return p == Precision::c ? Precision::s : p == Precision::z ? Precision::d : p;
}

// Bytes of one element: 4, 8, 8 and 16.
constexpr std::size_t element_bytes(Precision p) {
  return (real_of(p) == Precision::d ? 8 : 4) * (is_complex(p) ? 2 : 1);
}

// Whether its arithmetic needs double precision on the device (OpenCL's cl_khr_fp64): d and z.
// Whether a device has it is the device's to say (gpu::DeviceInfo::fp64).
constexpr bool needs_fp64(Precision p) { return real_of(p) == Precision::d; }

// The real flops one multiply-add counts: 2 for a real type; 8 for a complex one (four real
// products and four sums), so a complex GEMM's rate counts 8·m·n·k flops.
constexpr int flops_per_multiply_add(Precision p) { return is_complex(p) ? 8 : 2; }

// The precision `text` names: its letter alone ("s", "d", "c" or "z", lower case as profiles and
// options write them), or none.
constexpr std::optional<Precision> precision_from_letter(std::string_view text) {
  for (Precision p : kPrecisions)
    if (text.size() == 1 && text[0] == letter(p)) return p;
  return std::nullopt;
}

// Its letter, as tests and logs print it.
std::ostream& operator<<(std::ostream& out, Precision p);

// The precision `text` names, one letter: s, d, c or z. Throws std::invalid_argument saying what
// was given and what is accepted.
Precision parse_precision(std::string_view text);

// The precision of an element type: float, double, std::complex<float>, std::complex<double>.
template <class T>
constexpr Precision precision_of() {
  if constexpr (std::is_same_v<T, float>)
    return Precision::s;
  else if constexpr (std::is_same_v<T, double>)
    return Precision::d;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return Precision::c;
  else {
    static_assert(std::is_same_v<T, std::complex<double>>,
                  "tandem's element types are float, double, std::complex<float> and "
                  "std::complex<double>");
    return Precision::z;
  }
}

// The type of an element type's parts: float for float and std::complex<float>.
template <class T>
using real_type_t = decltype(std::abs(T{}));

// A quiet NaN of an element type: in both parts of a complex one.
template <class T>
T quiet_nan() {
  const real_type_t<T> x = std::numeric_limits<real_type_t<T>>::quiet_NaN();
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return T(x, x);
}

// Calls `f` with a value of a precision's element type: float{}, double{}, std::complex<float>{}
// or std::complex<double>{}. Where a precision chosen at run time becomes its templates' type.
template <class F>
decltype(auto) with_element_type(Precision precision, F&& f);
// The same for code that serves the real types alone (bench/model_check, bench/tandem_demo):
// float{} for s, double{} for d; throws std::invalid_argument for c and z.
template <class F>
decltype(auto) with_real_type(Precision precision, F&& f);

// A routine's name in one precision, built where the name is needed, at compile time where its
// parts are known then: routine_name(Precision::s, "gemm") is "sgemm".
class RoutineName {
 public:
  constexpr const char* c_str() const { return text_; }
  std::string str() const { return text_; }

 private:
  friend constexpr RoutineName routine_name(Precision, std::string_view);
  friend constexpr RoutineName cblas_name(Precision, std::string_view);
  friend constexpr RoutineName fortran_symbol(Precision, std::string_view);
  friend constexpr RoutineName xerbla_name(Precision, std::string_view);
  // Appends `part`, upper-cased where `upper`; a name longer than the room is cut (BLAS's longest,
  // "cblas_zsyr2k", takes 12 of its 31 characters).
  constexpr RoutineName& add(std::string_view part, bool upper = false) {
    for (char ch : part)
      if (size_ + 1 < sizeof text_)
        text_[size_++] = upper && ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 'a' + 'A') : ch;
    return *this;
  }
  char text_[32] = {};
  std::size_t size_ = 0;
};

// "sgemm": the routine as BLAS names it (logs, errors, tables).
constexpr RoutineName routine_name(Precision p, std::string_view routine) {
  const char prefix = letter(p);
  return RoutineName().add(std::string_view(&prefix, 1)).add(routine);
}
// "cblas_sgemm": its CBLAS entry.
constexpr RoutineName cblas_name(Precision p, std::string_view routine) {
  return RoutineName().add("cblas_").add(routine_name(p, routine).c_str());
}
// "sgemm_": its Fortran entry's symbol.
constexpr RoutineName fortran_symbol(Precision p, std::string_view routine) {
  return RoutineName().add(routine_name(p, routine).c_str()).add("_");
}
// "SGEMM ": the name a Fortran routine gives xerbla_, upper case and padded to six characters.
constexpr RoutineName xerbla_name(Precision p, std::string_view routine) {
  RoutineName name = RoutineName().add(routine_name(p, routine).c_str(), true);
  while (name.size_ < 6) name.add(" ");
  return name;
}

template <class F>
decltype(auto) with_real_type(Precision precision, F&& f) {
  switch (precision) {
    case Precision::s:
      return f(float{});
    case Precision::d:
      return f(double{});
    default:
      throw std::invalid_argument(
          "precision must be s or d here: " + routine_name(precision, "gemm").str() +
          " is not offered by this part of tandem yet");
  }
}

template <class F>
decltype(auto) with_element_type(Precision precision, F&& f) {
  switch (precision) {
    case Precision::s:
      return f(float{});
    case Precision::d:
      return f(double{});
    case Precision::c:
      return f(std::complex<float>{});
    default:
      return f(std::complex<double>{});
  }
}

}  // namespace tandem::detail

// Instantiates a template for every element type: X(float) X(double) X(std::complex<float>)
// X(std::complex<double>), in BLAS's order. The one list of them; each file that instantiates
// defines X for its own templates, uses this, and undefines X.
#define TANDEM_FOR_EACH_ELEMENT(X) X(float) X(double) X(std::complex<float>) X(std::complex<double>)
