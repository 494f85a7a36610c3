// Token sources and micro-batches: determinism, random access, file formats, one-line errors, and
// DP shards that are disjoint and together equal the one-rank batch.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <map>
#include <set>
#include <unistd.h>

#include "executor/data/batches.h"

using namespace meshplan::exec;
namespace fs = std::filesystem;

namespace {
fs::path temp_file(const std::string& name, const std::vector<unsigned char>& bytes) {
  const fs::path p = fs::temp_directory_path() / ("meshplan-data-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return p;
}
}  // namespace

TEST_CASE("synthetic tokens are seeded, in vocabulary and randomly accessible", "[executor][data]") {
  auto a = make_synthetic_tokens(50, 3), b = make_synthetic_tokens(50, 3), c = make_synthetic_tokens(50, 4);
  std::vector<int32_t> x(300), y(300), z(300), part(37);
  a->read(10, 300, x.data());
  b->read(10, 300, y.data());
  c->read(10, 300, z.data());
  CHECK(x == y);
  CHECK(x != z);
  for (int32_t t : x) CHECK((t >= 0 && t < 50));
  b->read(100, 37, part.data());  // starts mid-segment
  CHECK(std::equal(part.begin(), part.end(), x.begin() + 90));
  // Learnable: each token has at most 4 successors inside a segment.
  std::map<int32_t, std::set<int32_t>> next;
  std::vector<int32_t> long_run(64 * 200);
  a->read(0, static_cast<int64_t>(long_run.size()), long_run.data());
  for (size_t i = 1; i < long_run.size(); ++i) {
    if (i % 64 != 0) next[long_run[i - 1]].insert(long_run[i]);
  }
  for (const auto& [tok, succ] : next) CHECK(succ.size() <= 4);
}

TEST_CASE("text files are bytes with vocab 256", "[executor][data]") {
  const fs::path p = temp_file("t.txt", {'h', 'i', 0xC3, 0xA9, '\n'});
  auto src = open_data_file(p.string(), 1000);
  REQUIRE(src.ok());
  CHECK(src.value()->vocab_size() == 256);
  std::vector<int32_t> t(5);
  src.value()->read(0, 5, t.data());
  CHECK(t == std::vector<int32_t>{'h', 'i', 0xC3, 0xA9, '\n'});
  fs::remove(p);
}

TEST_CASE("binary token files: uint16, uint32, llm.c header, and bad ids", "[executor][data]") {
  const fs::path p16 = temp_file("a.u16", {1, 0, 2, 1, 255, 0});
  auto s16 = open_data_file(p16.string(), 300);
  REQUIRE(s16.ok());
  std::vector<int32_t> t(3);
  s16.value()->read(0, 3, t.data());
  CHECK(t == std::vector<int32_t>{1, 258, 255});
  const fs::path p32 = temp_file("a.u32", {7, 0, 1, 0, 3, 0, 0, 0});
  auto s32 = open_data_file(p32.string(), 70000);
  REQUIRE(s32.ok());
  s32.value()->read(0, 2, t.data());
  CHECK(t[0] == 65543);
  CHECK(t[1] == 3);
  std::vector<unsigned char> llmc(1024 + 4, 0);
  const int32_t magic = 20240520, version = 1, count = 2;
  std::memcpy(llmc.data(), &magic, 4);
  std::memcpy(llmc.data() + 4, &version, 4);
  std::memcpy(llmc.data() + 8, &count, 4);
  llmc[1024] = 9;
  llmc[1026] = 4;
  const fs::path pl = temp_file("l.bin", llmc);
  auto sl = open_data_file(pl.string(), 10);
  REQUIRE(sl.ok());
  CHECK(sl.value()->num_tokens() == 2);
  sl.value()->read(0, 2, t.data());
  CHECK(t[0] == 9);
  CHECK(t[1] == 4);
  auto bad = open_data_file(p16.string(), 100);  // token 258 >= vocab 100
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().one_line().find("vocab_size=100") != std::string::npos);
  CHECK_FALSE(open_data_file("/nonexistent/x.txt", 256).ok());
  CHECK_FALSE(open_data_file(p16.string() + ".csv", 256).ok());
  for (const auto& p : {p16, p32, pl}) fs::remove(p);
}

TEST_CASE("DP ranks read disjoint windows that together are the one-rank batch", "[executor][data]") {
  auto src = make_synthetic_tokens(100, 1);
  const int64_t B = 2, T = 5, M = 2;
  for (int64_t step = 0; step < 3; ++step) {
    std::set<int64_t> dp_windows, single;
    for (int d = 0; d < 2; ++d) {
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t b = 0; b < B; ++b) {
          const int64_t w = window_index(BatchCoord{step, m, M, d, 2, B, T}, b, 1 << 30);
          CHECK(dp_windows.insert(w).second);  // never read twice in a step
        }
      }
    }
    for (int64_t m = 0; m < 2 * M; ++m) {
      for (int64_t b = 0; b < B; ++b) single.insert(window_index(BatchCoord{step, m, 2 * M, 0, 1, B, T}, b, 1 << 30));
    }
    CHECK(dp_windows == single);
  }
  std::vector<int32_t> in(B * T), tg(B * T);
  load_micro_batch(*src, BatchCoord{1, 1, M, 1, 2, B, T}, in.data(), tg.data());
  for (int64_t i = 0; i + 1 < T; ++i) CHECK(tg[i] == in[i + 1]);  // targets are inputs shifted
}

TEST_CASE("a source too short for one sequence is a one-line error", "[executor][data]") {
  const fs::path p = temp_file("short.txt", {'a', 'b', 'c'});
  auto src = open_data_file(p.string(), 256);
  REQUIRE(src.ok());
  const meshplan::ErrorList errs = validate_source(*src.value(), 8, 256, p.string());
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].one_line().find("one sequence needs 9") != std::string::npos);
  CHECK(validate_source(*src.value(), 2, 128, p.string()).size() == 1);  // vocab 256 > 128
  fs::remove(p);
}
