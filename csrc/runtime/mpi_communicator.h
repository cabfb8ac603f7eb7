// Collectives across processes through MPI (Open MPI): one participant per
// process, the process's rank in MPI_COMM_WORLD. Built with MPI when CMake
// finds it (UIR_HAVE_MPI); without, MpiBuilt() is false and the rest
// throws DistributedError saying so.
//
// Each collective of an executable gets a communicator of its own (split
// from the world by its group, once per executable), so collectives that
// run at once on different threads (async starts) never meet out of order.
// A process that fails tells the others (MpiReportFailure, or
// Communicator::Fail when a run fails). The check at the start of every
// run is polled and raises DistributedError with that message; the
// collectives are MPI's blocking calls, and a watchdog thread ends (status
// 1, the failure printed) a process whose blocking call waits for one that
// failed.
#ifndef UIR_RUNTIME_MPI_COMMUNICATOR_H_
#define UIR_RUNTIME_MPI_COMMUNICATOR_H_

#include <cstdint>
#include <string>

#include "runtime/collectives.h"

namespace uir::runtime {

// Whether this build has MPI.
bool MpiBuilt();
// The MPI library's own version line ("Open MPI v4.1.4, ..."); empty
// without MPI.
std::string MpiLibraryVersion();

struct MpiWorldInfo {
  int rank = 0;
  int size = 1;
};
// Initializes MPI once per process, with MPI_THREAD_MULTIPLE (thunks run
// collectives from several threads); later calls return the same. Throws
// DistributedError without MPI, or when the library cannot give that
// thread level.
MpiWorldInfo MpiInitialize();
bool MpiInitialized();
// Waits for every process (a barrier that fails, rather than hangs, when
// another process reported a failure), then finalizes MPI. A no-op when
// not initialized, or after a failure (finalizing then could hang).
void MpiFinalize();
// A barrier across every process, failing like any wait.
void MpiBarrier();
// This process as a participant (MpiInitialize first).
Communicator& MpiWorld();
// Tells every other process that this one failed with `message` (they
// raise it); waits briefly for the notices to leave. Once per process.
void MpiReportFailure(const std::string& message);

// The baseline for benchmarks: seconds per MPI_Allreduce (MPI_SUM) of
// `count` floats from `in` into `out` (in place when they are one) on
// MPI_COMM_WORLD, averaged over `iterations` after a barrier.
double MpiAllreduceSeconds(const float* in, float* out, int64_t count, int iterations);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_MPI_COMMUNICATOR_H_
