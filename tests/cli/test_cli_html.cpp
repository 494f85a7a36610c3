// `plan/estimate/simulate --html`: one self-contained, deterministic page with every section.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

static const std::string kProblem = " --model " + source_path("examples/models/llama-2-7b.yaml") +
                                    " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --seq 4096";

static std::string html_of(const std::string& args, const std::string& file) {
  const std::string path = scratch_dir() + "/" + file;
  const CliResult r = run_cli(args + " --html " + path);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return slurp(path);
}

// Every src= / href= / url( in the page: a self-contained page has none pointing outside itself.
static void require_self_contained(const std::string& html) {
  const std::regex ref(R"((src|href)\s*=\s*["']?([^"'\s>]*)|url\(([^)]*)\)|@import)", std::regex::icase);
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator(); ++it) {
    const std::string target = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    INFO("reference: " << it->str());
    CHECK((!target.empty() && target[0] == '#'));
  }
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);
}

TEST_CASE("plan --html writes one self-contained page with every section, byte-identical") {
  const std::string args = "plan" + kProblem + " -q";
  const std::string a = html_of(args, "plan1.html"), b = html_of(args, "plan2.html");
  REQUIRE(a == b);
  REQUIRE(a.rfind("<!DOCTYPE html>", 0) == 0);
  for (const char* id : {"problem", "pareto", "candidates", "memory", "time", "timeline", "accuracy", "provenance"})
    CHECK(a.find(std::string("<section id=\"") + id + "\"") != std::string::npos);
  require_self_contained(a);
  CHECK(a.find("llama-2-7b") != std::string::npos);
  CHECK(a.find("GPU capacity") != std::string::npos);
  CHECK(a.find("no token count") != std::string::npos);
  CHECK(a.find("held-out") != std::string::npos);
  CHECK(a.find(", git ") != std::string::npos);  // provenance: version and commit
}

TEST_CASE("plan --html leaves stdout as it was") {
  const CliResult plain = run_cli("plan" + kProblem + " -q");
  const CliResult with = run_cli("plan" + kProblem + " -q --html " + scratch_dir() + "/same.html");
  REQUIRE(plain.exit_code == 0);
  REQUIRE(with.exit_code == 0);
  CHECK(plain.out == with.out);
}

TEST_CASE("estimate and simulate --html give the one-plan page") {
  const std::string cfg = kProblem + " --tp 2 --pp 2 --zero 1 --micro-batch 1 --schedule 1f1b";
  for (const char* cmd : {"estimate", "simulate"}) {
    INFO(cmd);
    const std::string h = html_of(std::string(cmd) + cfg, std::string(cmd) + ".html");
    for (const char* id : {"problem", "memory", "time", "timeline", "accuracy", "provenance"})
      CHECK(h.find(std::string("<section id=\"") + id + "\"") != std::string::npos);
    CHECK(h.find("id=\"pareto\"") == std::string::npos);
    CHECK(h.find("rank 1") != std::string::npos);  // the simulator's Gantt rows, one per pipeline rank
    require_self_contained(h);
  }
}

TEST_CASE("text in the page is escaped") {
  const std::string dir = scratch_dir();
  std::string model = slurp(source_path("examples/models/llama-2-7b.yaml"));
  const size_t at = model.find("name: llama-2-7b");
  REQUIRE(at != std::string::npos);
  model.replace(at, 16, "name: \"<b>x&y</b>\"");
  const std::string path = write_scratch("m.yaml", model);
  const CliResult r = run_cli("estimate --model " + path +
                                   " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --seq 4096 --tp 2 --html " +
                                   dir + "/e.html");
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string h = slurp(dir + "/e.html");
  CHECK(h.find("<b>x&y</b>") == std::string::npos);
  CHECK(h.find("&lt;b&gt;x&amp;y&lt;/b&gt;") != std::string::npos);
}

TEST_CASE("an unwritable --html path is one line and exit 2") {
  const CliResult r = run_cli("estimate" + kProblem + " --tp 2 --html /nonexistent-dir/r.html");
  CHECK(r.exit_code == 2);
  // One error line naming the flag (the accuracy note, when printed, is a line of its own).
  CHECK(r.err.find("meshplan: command line: --html=/nonexistent-dir/r.html: cannot be written") != std::string::npos);
  int errors = 0;
  for (size_t at = r.err.find("meshplan:"); at != std::string::npos; at = r.err.find("meshplan:", at + 1)) ++errors;
  CHECK(errors == 1);
}
