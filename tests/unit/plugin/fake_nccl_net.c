/* A stand-in for an NCCL net plugin, for the aws-ofi-nccl probe's tests (transports/nccl_path.h):
   only what the probe reads, the name at the head of the structure NCCL looks up. */
struct FakeNet {
  const char* name;
};

const struct FakeNet ncclNetPlugin_v8 = {FAKE_NET_NAME};
