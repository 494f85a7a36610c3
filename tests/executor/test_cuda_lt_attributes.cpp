// The cuBLASLt attribute table (executor/cuda/lt_attributes.h) against the installed cublasLt.h:
// every attribute we set must carry the C type the header declares for it. Runs without a GPU
// (it reads the header text), so the uint64_t-for-uint32_t alignment bug of issue 13 fails here.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "skip.h"

#ifdef MESHPLAN_HAVE_CUDA
#include "executor/cuda/lt_attributes.h"

namespace {

std::string read_header() {
  const std::string path = std::string(MESHPLAN_CUDA_INCLUDE_DIR) + "/cublasLt.h";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// The value type named in the doc comment directly above `name = <n>,` in cublasLt.h
/// ("uint32_t, default: 256"), or "" when the enumerator or a scalar type is not found.
std::string declared_type(const std::string& header, const std::string& name) {
  const std::regex entry("\\n\\s*" + name + "\\s*=\\s*[0-9]+\\s*,");
  std::smatch m;
  if (!std::regex_search(header, m, entry)) return "";
  const size_t at = static_cast<size_t>(m.position(0));
  const size_t open = header.rfind("/**", at);
  if (open == std::string::npos) return "";
  const std::string comment = header.substr(open, at - open);
  const std::regex type_line("\\n\\s*\\*\\s*(u?int(8|16|32|64)_t|float|double)\\b");
  std::smatch t;
  if (!std::regex_search(comment, t, type_line)) return "";
  return t[1].str();
}

}  // namespace

TEST_CASE("cuBLASLt attribute types match cublasLt.h", "[cuda][gemm][no-gpu]") {
  const std::string header = read_header();
  for (const auto& row : meshplan::exec::lt::kAttributeTable) {
    INFO(row.name << " set as " << row.c_type);
    CHECK(declared_type(header, row.name) == row.c_type);
  }
}

TEST_CASE("the attribute parser finds the declared widths it must distinguish", "[cuda][gemm][no-gpu]") {
  // Guards the test above against a parser that always agrees: known declarations of CUDA 13.
  const std::string header = read_header();
  CHECK(declared_type(header, "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES") == "uint64_t");
  CHECK(declared_type(header, "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES") == "uint32_t");
  CHECK(declared_type(header, "CUBLASLT_MATMUL_DESC_TRANSA") == "int32_t");
  CHECK(declared_type(header, "CUBLASLT_NO_SUCH_ATTRIBUTE").empty());
  CHECK(sizeof(meshplan::exec::lt::PrefType<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES>::type) == 4);
}
#else
TEST_CASE("cuBLASLt attribute types match cublasLt.h", "[cuda][gemm][no-gpu]") {
  meshplan_test::skip("this build has no CUDA backend (no cublasLt.h to check against)");
}
#endif
