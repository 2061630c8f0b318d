// fmt's compiled part, for a build that links its dependencies statically
// (cmake/Dependencies.cmake, DENPEX_STATIC_DEPS): Debian ships fmt as a
// shared library only, and compiling it header-only (FMT_HEADER_ONLY)
// recompiled all of it in each of ~30 sources, a minute of a fresh build.
// Here it is compiled once: the definitions of format-inl.h and the
// templates format.h declares extern.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
} // namespace detail
FMT_END_NAMESPACE
