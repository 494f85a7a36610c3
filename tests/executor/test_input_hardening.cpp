// Hostile executor inputs: data files that are not text or not regular files, and corrupt checkpoint
// MANIFEST text and shard bytes; each is an Error, never a crash or an unbounded allocation.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "executor/checkpoint/checkpoint_dir.h"
#include "executor/checkpoint/shard_file.h"
#include "executor/data/token_source.h"

using namespace meshplan::exec;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::temp_directory_path() / ("meshplan-hardening-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

}  // namespace

TEST_CASE("data: a text file with NUL or non-UTF-8 bytes is refused", "[executor][data]") {
  auto nul = open_data_file(scratch("nul.txt", std::string("ab\0cd", 5)).string(), 1000);
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.error().message.find("not text") != std::string::npos);
  CHECK(nul.error().value.find("at byte 2") != std::string::npos);
  auto latin1 = open_data_file(scratch("latin1.txt", "caf\xe9\n").string(), 1000);
  REQUIRE_FALSE(latin1.ok());
  CHECK(latin1.error().value.find("0xE9") != std::string::npos);
  auto empty = open_data_file(scratch("empty.txt", "").string(), 1000);
  CHECK_FALSE(empty.ok());
}

TEST_CASE("data: FIFOs and directories are refused without blocking", "[executor][data]") {
  const fs::path fifo = scratch("x", "").parent_path() / "fifo.txt";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto f = open_data_file(fifo.string(), 1000);  // would block forever in open() if it were read
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("not a regular file") != std::string::npos);
  auto d = open_data_file(fifo.parent_path().string(), 1000);
  CHECK_FALSE(d.ok());
  fs::remove_all(fifo.parent_path());
}

TEST_CASE("checkpoint: corrupt MANIFEST text is an Error", "[executor][checkpoint]") {
  const std::string good =
      "meshplan-checkpoint 1\nstep 4\nworld_size 2\nfingerprint 1f\nshard 0 100\nshard 1 100\nend\n";
  auto ok = parse_manifest_text(good, "M");
  REQUIRE(ok.ok());
  CHECK(ok->step == 4);
  CHECK(ok->shard_bytes.size() == 2);
  for (const std::string& bad : {std::string(""), good.substr(0, good.size() / 2),
                                 std::string("meshplan-checkpoint 2\n"),
                                 std::string("meshplan-checkpoint 1\nstep 99999999999999999999999\n"),
                                 std::string("meshplan-checkpoint 1\nstep 1\nworld_size 3\nfingerprint 0\nend\n"),
                                 std::string("meshplan-checkpoint 1\nshard 5 1\n"),
                                 std::string("meshplan-checkpoint 1\nbogus 1\n")}) {
    auto r = parse_manifest_text(bad, "M");
    CHECK_FALSE(r.ok());
  }
}

TEST_CASE("checkpoint: corrupt shard bytes are an Error, whatever counts they claim", "[executor][checkpoint]") {
  const std::vector<Section> sections = {make_section("w", "abcdefgh", 8)};
  const fs::path p = scratch("rank.bin", "");
  REQUIRE(write_shard_file(p.string(), sections).ok());
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(parse_shard(bytes, "s").ok());
  for (size_t cut = 0; cut < bytes.size(); ++cut) CHECK_FALSE(parse_shard(bytes.substr(0, cut), "s").ok());
  std::string flipped = bytes;
  flipped[flipped.size() - 12] ^= 1;  // a payload byte: checksum mismatch
  CHECK_FALSE(parse_shard(flipped, "s").ok());
  std::string huge_count = bytes;
  const uint32_t count = 1u << 20;     // a million sections claimed by a 60-byte file
  std::memcpy(&huge_count[12], &count, 4);
  CHECK_FALSE(parse_shard(huge_count, "s").ok());
  std::string huge_section = bytes;
  const uint64_t len = uint64_t{1} << 62;
  std::memcpy(&huge_section[12 + 4 + 4 + 1], &len, 8);  // magic, version, count, name length, "w"
  CHECK_FALSE(parse_shard(huge_section, "s").ok());
  fs::remove_all(p.parent_path());
}
