// Reporting of MPI failures: one line with file:line, MPI's error string, rank and host; abort.
#include "executor/mpi/mpi_check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace meshplan::exec {

static int world_rank_or_minus_one() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  int rank = -1;
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

static std::string host_name() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

[[noreturn]] static void abort_job() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

void mpi_check(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, message, &length) != MPI_SUCCESS) std::snprintf(message, sizeof(message), "code %d", code);
  std::fprintf(stderr, "meshplan: MPI error at %s:%d on rank %d (host %s): %s [%s]\n", file, line,
               world_rank_or_minus_one(), host_name().c_str(), message, call);
  std::fflush(stderr);
  abort_job();
}

void mpi_fail(const char* what) {
  std::fprintf(stderr, "meshplan: rank %d (host %s): %s\n", world_rank_or_minus_one(),
               host_name().c_str(), what);
  std::fflush(stderr);
  abort_job();
}

}  // namespace meshplan::exec
