// MPI_CHECK: every MPI call of the executor goes through it; a failure prints file:line, MPI's own
// message, the rank and host on one line, then aborts the whole job (peers would otherwise hang).
#pragma once
#include <mpi.h>

namespace meshplan::exec {

/// Called by MPI_CHECK with the call's return code; returns normally only on MPI_SUCCESS.
void mpi_check(int code, const char* call, const char* file, int line);

/// Prints "meshplan: rank R (host H): <what>" on stderr and ends the job with MPI_Abort(1).
/// For failures MPI cannot report itself (a communication that never completes).
[[noreturn]] void mpi_fail(const char* what);

}  // namespace meshplan::exec

#define MPI_CHECK(call) ::meshplan::exec::mpi_check((call), #call, __FILE__, __LINE__)
