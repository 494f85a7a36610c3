// CLI: --ep/--etp on a dense model is one line and exit 2 (plan and estimate); ep=etp=1 on a dense
// model leaves the JSON without expert keys (dense outputs byte-identical to before issue 11).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct CliResult {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CliResult sh(const std::string& args) {
  const std::string base = "/tmp/meshplan_test_moe_cli_" + std::to_string(getpid());
  const std::string out = base + "_out", err = base + "_err";
  const std::string cmd = std::string(MESHPLAN_BIN) + " " + args + " --model " + MESHPLAN_SOURCE_DIR +
                          "/examples/models/llama-2-7b.yaml --hardware h100-80gb-sxm --gpus 8 --global-batch 8";
  const int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

void require_one_line_exit_2(const CliResult& r, const std::string& flag) {
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  REQUIRE(!r.err.empty());
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.err.find(flag) != std::string::npos);
  CHECK(r.err.find("is dense") != std::string::npos);
}

}  // namespace

TEST_CASE("cli: --ep/--etp need a mixture-of-experts model") {
  require_one_line_exit_2(sh("plan --ep 2"), "--ep");
  require_one_line_exit_2(sh("plan --etp 2"), "--etp");
  require_one_line_exit_2(sh("estimate --ep 2"), "--ep");
  require_one_line_exit_2(sh("estimate --etp 2 --tp 2 --sequence-parallel"), "--etp");
  const CliResult ok = sh("estimate --ep 1 --etp 1 --format json");
  REQUIRE(ok.rc == 0);
  CHECK(ok.out.find("\"ep\"") == std::string::npos);
  CHECK(ok.out.find("\"etp\"") == std::string::npos);
}
