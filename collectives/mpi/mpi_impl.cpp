// `mpi`: the MPI library's own collectives as the baseline (MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Bcast, MPI_Sendrecv, MPI_Alltoall, MPI_Alltoallv, MPI_Reduce,
// MPI_Gather, MPI_Scatter), on host buffers, on a duplicate of the run's communicator. In-place forms use MPI_IN_PLACE,
// except reduce-scatter, whose in-place layout (NCCL's) MPI_IN_PLACE does not have. The calls block inside the library,
// which has no deadline of its own: the harness watchdog bounds them.
#include <algorithm>
#include <climits>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/reduce_kernels.h"
#include "collectives/numeric.h"
#include "core/checks.h"
#include "core/error.h"
#include "transports/cpu/mpi_channel.h"
#include "core/transport_names.h"

namespace ccbench {

namespace {

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::int8: return MPI_INT8_T;
    case DataType::uint8: return MPI_UINT8_T;
    case DataType::int32: return MPI_INT32_T;
    case DataType::uint32: return MPI_UINT32_T;
    case DataType::int64: return MPI_INT64_T;
    case DataType::uint64: return MPI_UINT64_T;
    case DataType::float16:
    case DataType::bfloat16: return MPI_UINT16_T;  // reduced with our own MPI_Op
    case DataType::f8e4m3:
    case DataType::f8e5m2: return MPI_UINT8_T;  // likewise
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

// MPI has no half, bfloat16 or fp8 type: they travel as 16- or 8-bit integers and reduce with
// these operations, the CPU executors' loops (reduce_pair's arithmetic, vectorised).
constexpr DataType kNarrowTypes[] = {DataType::float16, DataType::bfloat16, DataType::f8e4m3, DataType::f8e5m2};
constexpr int kNarrowTypeCount = static_cast<int>(std::size(kNarrowTypes));

int narrow_index(DataType t) {
  for (int i = 0; i < kNarrowTypeCount; ++i)
    if (kNarrowTypes[i] == t) return i;
  return -1;
}

// inout = in op inout.
template <int TYPE, ReduceOp OP>
void narrow_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  static const ReduceKernels kernels(kNarrowTypes[TYPE], OP, 1);
  kernels.reduce(inout, in, inout, static_cast<size_t>(*len));
}

template <int TYPE>
void create_ops(MPI_Op (&ops)[4]) {
  check_mpi(MPI_Op_create(&narrow_reduce<TYPE, ReduceOp::sum>, 1, &ops[0]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&narrow_reduce<TYPE, ReduceOp::prod>, 1, &ops[1]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&narrow_reduce<TYPE, ReduceOp::min>, 1, &ops[2]), "MPI_Op_create");
  check_mpi(MPI_Op_create(&narrow_reduce<TYPE, ReduceOp::max>, 1, &ops[3]), "MPI_Op_create");
}

int op_index(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return 1;
    case ReduceOp::min: return 2;
    case ReduceOp::max: return 3;
    default: return 0;  // sum, and avg (sum, then divided)
  }
}

// Whether the library's MPI_SUM on an 8-bit integer type saturates instead of wrapping around, as
// Open MPI's op/avx component does with its saturating vector adds (open-mpi/ompi#8045, closed
// as won't fix). A local probe, the same on every rank; long enough to take the vector path.
bool sum_saturates(DataType t) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return false;
  constexpr int kLen = 1024;
  const bool is_signed = t == DataType::int8;
  std::vector<std::uint8_t> in(kLen, is_signed ? 100 : 200), inout(kLen, 100);
  if (MPI_Reduce_local(in.data(), inout.data(), kLen, mpi_type(t), MPI_SUM) != MPI_SUCCESS) return false;
  const std::uint8_t wrapped = is_signed ? 200 : 44;  // int8 100 + 100 = -56; uint8 200 + 100 = 44
  for (std::uint8_t v : inout)
    if (v != wrapped) return true;
  return false;
}

class MpiBaseline final : public Implementation {
 public:
  ~MpiBaseline() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (auto& per_type : narrow_ops_)
      for (MPI_Op& op : per_type)
        if (op != MPI_OP_NULL) MPI_Op_free(&op);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  CollectiveSet collectives() const override {
    return {Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::broadcast,
            Collective::sendrecv,  Collective::alltoall,  Collective::alltoallv,     Collective::reduce,
            Collective::gather,    Collective::scatter};
  }

  std::optional<std::string> unsupported(const CaseSpec& spec, const ImplContext& ctx) const override {
    if (auto why = undeclared_collective(*this, name(ImplId::mpi), spec.coll)) return why;
    if (ctx.device != Device::cpu) return std::string("the mpi baseline works on host buffers (CPU ranks)");
    if (has_reduce_op(spec.coll) && spec.op == ReduceOp::sum &&
        (spec.dtype == DataType::int8 || spec.dtype == DataType::uint8)) {
      static const bool saturates[2] = {sum_saturates(DataType::int8), sum_saturates(DataType::uint8)};
      if (saturates[spec.dtype == DataType::uint8])
        return fmt::format(
            "this MPI library saturates {} MPI_SUM (Open MPI op/avx, open-mpi/ompi#8045) where "
            "ccbench's integer sums wrap around",
            name(spec.dtype));
    }
    return std::nullopt;
  }

  void setup(const ImplContext& ctx) override {
    if (comm_ == MPI_COMM_NULL) {
      check_mpi(MPI_Comm_dup(ctx.comm, &comm_), "MPI_Comm_dup for the mpi baseline");
      MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
      create_ops<0>(narrow_ops_[0]);
      create_ops<1>(narrow_ops_[1]);
      create_ops<2>(narrow_ops_[2]);
      create_ops<3>(narrow_ops_[3]);
    }
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &n_);
  }

  void run(const CallArgs& a) override {
    if (comm_ == MPI_COMM_NULL) fail(ExitCode::runtime, "mpi: run() before setup()");
    if (auto why = undeclared_collective(*this, name(ImplId::mpi), a.spec.coll)) fail(ExitCode::usage, "{}", *why);
    const CaseSpec& s = a.spec;
    const CollectiveShape shape = shape_for_count(s.coll, s.dtype, n_, a.count);
    if (std::max(shape.send_elements, shape.recv_elements) > static_cast<size_t>(INT_MAX))
      fail(ExitCode::precondition,
           "the mpi baseline takes at most {} elements per buffer (MPI counts and "
           "displacements are int), asked for {}",
           INT_MAX, std::max(shape.send_elements, shape.recv_elements));
    const Call c{s,
                 static_cast<const char*>(a.send),
                 static_cast<char*>(a.recv),
                 static_cast<int>(a.count),
                 mpi_type(s.dtype),
                 element_size(s.dtype)};
    switch (s.coll) {
      case Collective::allreduce:
        check_mpi(MPI_Allreduce(c.send == c.recv ? MPI_IN_PLACE : c.send, c.recv, c.count, c.type, mpi_op(s), comm_),
                  "MPI_Allreduce");
        break;
      case Collective::reducescatter: reduce_scatter(c); break;
      case Collective::allgather: allgather(c); break;
      case Collective::broadcast:
        if (rank_ == s.root && c.send != c.recv) std::memcpy(c.recv, c.send, a.count * c.esz);
        check_mpi(MPI_Bcast(c.recv, c.count, c.type, s.root, comm_), "MPI_Bcast");
        break;
      case Collective::sendrecv: sendrecv(c); break;
      case Collective::alltoall:
        check_mpi(MPI_Alltoall(c.send, c.count, c.type, c.recv, c.count, c.type, comm_), "MPI_Alltoall");
        break;
      case Collective::alltoallv: alltoallv(c); break;
      case Collective::reduce: reduce(c); break;
      case Collective::gather: gather(c); break;
      case Collective::scatter: scatter(c); break;
    }
    // MPI has no average: the baseline sums (MPI_SUM) and divides every output element by the
    // rank count afterwards (finalize), as NCCL's integer avg does; the divide is part of the
    // measured time.
    if (has_reduce_op(s.coll) && s.op == ReduceOp::avg && output_elements(s.coll, rank_, s.root, shape) > 0)
      ReduceKernels(s.dtype, s.op, n_).finalize(c.recv, c.recv, a.count);
  }

  std::string transport() const override { return std::string(name(Transport::mpi)); }

 private:
  // One call's arguments in MPI's terms.
  struct Call {
    const CaseSpec& spec;
    const char* send;
    char* recv;
    int count;  // elements per rank (per block for the n-block collectives)
    MPI_Datatype type;
    size_t esz;
    const char* block(int p) const { return send + static_cast<size_t>(p) * count * esz; }
    char* recv_block(int p) const { return recv + static_cast<size_t>(p) * count * esz; }
  };

  void reduce_scatter(const Call& c) {
    const size_t mine = static_cast<size_t>(rank_) * c.count * c.esz;
    if (c.recv == c.send + mine) {
      // The in-place layout (NCCL's) puts the result in block `rank` and keeps the other input
      // blocks. MPI_IN_PLACE cannot: it leaves the result at the buffer's start, over block 0,
      // and may use the rest as scratch. So: a scratch result, then one copy.
      const size_t bytes = static_cast<size_t>(c.count) * c.esz;
      if (scratch_.size() < bytes) scratch_.resize(bytes);
      check_mpi(MPI_Reduce_scatter_block(c.send, scratch_.data(), c.count, c.type, mpi_op(c.spec), comm_),
                "MPI_Reduce_scatter_block");
      std::memcpy(c.recv, scratch_.data(), bytes);
    } else {
      check_mpi(MPI_Reduce_scatter_block(c.send, c.recv, c.count, c.type, mpi_op(c.spec), comm_),
                "MPI_Reduce_scatter_block");
    }
  }

  // In place, the harness passes send = recv + rank * count: MPI_IN_PLACE's layout.
  void allgather(const Call& c) {
    const bool in_place = c.send == c.recv_block(rank_);
    check_mpi(MPI_Allgather(in_place ? MPI_IN_PLACE : c.send, in_place ? 0 : c.count,
                            in_place ? MPI_DATATYPE_NULL : c.type, c.recv, c.count, c.type, comm_),
              "MPI_Allgather");
  }

  void sendrecv(const Call& c) {
    if (c.send == c.recv) fail(ExitCode::usage, "sendrecv/mpi has no in-place form");
    check_mpi(MPI_Sendrecv(c.send, c.count, c.type, (rank_ + 1) % n_, 0, c.recv, c.count, c.type, (rank_ + n_ - 1) % n_,
                           0, comm_, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
  }

  // The skew of the alltoallv descriptor as MPI's per-peer counts and displacements.
  void alltoallv(const Call& c) {
    const size_t count = static_cast<size_t>(c.count);
    for (auto* v : {&send_counts_, &send_displs_, &recv_counts_, &recv_displs_}) v->resize(static_cast<size_t>(n_));
    for (int p = 0; p < n_; ++p) {
      const size_t i = static_cast<size_t>(p);
      send_counts_[i] = static_cast<int>(alltoallv_block(rank_, p, n_, count));
      send_displs_[i] = static_cast<int>(alltoallv_send_offset(rank_, p, n_, count));
      recv_counts_[i] = static_cast<int>(alltoallv_block(p, rank_, n_, count));
      recv_displs_[i] = static_cast<int>(alltoallv_recv_offset(rank_, p, n_, count));
    }
    check_mpi(MPI_Alltoallv(c.send, send_counts_.data(), send_displs_.data(), c.type, c.recv, recv_counts_.data(),
                            recv_displs_.data(), c.type, comm_),
              "MPI_Alltoallv");
  }

  // In place (one buffer), the root passes MPI_IN_PLACE; the others' receive buffer is unused.
  void reduce(const Call& c) {
    const bool in_place_root = rank_ == c.spec.root && c.send == c.recv;
    check_mpi(
        MPI_Reduce(in_place_root ? MPI_IN_PLACE : c.send, c.recv, c.count, c.type, mpi_op(c.spec), c.spec.root, comm_),
        "MPI_Reduce");
  }

  // In place, send = recv + rank * count: at the root that is MPI_IN_PLACE's layout.
  void gather(const Call& c) {
    const bool in_place_root = rank_ == c.spec.root && c.send == c.recv_block(rank_);
    check_mpi(MPI_Gather(in_place_root ? MPI_IN_PLACE : c.send, in_place_root ? 0 : c.count,
                         in_place_root ? MPI_DATATYPE_NULL : c.type, c.recv, c.count, c.type, c.spec.root, comm_),
              "MPI_Gather");
  }

  // In place, recv = send + rank * count: at the root that is MPI_IN_PLACE's layout.
  void scatter(const Call& c) {
    const bool in_place_root = rank_ == c.spec.root && c.recv == c.block(rank_);
    check_mpi(MPI_Scatter(c.send, c.count, c.type, in_place_root ? MPI_IN_PLACE : c.recv, in_place_root ? 0 : c.count,
                          in_place_root ? MPI_DATATYPE_NULL : c.type, c.spec.root, comm_),
              "MPI_Scatter");
  }

  MPI_Op mpi_op(const CaseSpec& s) const {
    if (const int t = narrow_index(s.dtype); t >= 0) return narrow_ops_[t][op_index(s.op)];
    switch (s.op) {
      case ReduceOp::prod: return MPI_PROD;
      case ReduceOp::min: return MPI_MIN;
      case ReduceOp::max: return MPI_MAX;
      default: return MPI_SUM;
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op narrow_ops_[kNarrowTypeCount][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                                             {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                                             {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                                             {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};
  int rank_ = 0, n_ = 1;
  std::vector<char> scratch_;  // in-place reduce-scatter's result before it goes into its block
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;  // alltoallv
};

}  // namespace

std::unique_ptr<Implementation> make_mpi_baseline() { return std::make_unique<MpiBaseline>(); }

}  // namespace ccbench
