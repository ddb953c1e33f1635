# GPU pipeline tests (label gpu): the ring and tree kernels with small slots, so that every size
# runs many pipeline loops per channel, at awkward sizes (factors of 7, counts not divisible by
# the ranks) up to tens of MiB; once with few channels (many loops each) and once with the
# default channel count (many channels, each with a short, uneven share). Decided by
# tests/check_results.py through run_gpu_test.sh: exit code, every row and the footer.
# Skipped (exit 77) with the reason where this machine has no GPU.
set(_pipeline_runner ${CMAKE_CURRENT_LIST_DIR}/run_gpu_test.sh)
function(ccbench_gpu_pipeline_test name ranks env)
  add_test(NAME ${name} COMMAND ${_pipeline_runner} $<TARGET_FILE:ccbench> ${ranks} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE
                       ENVIRONMENT "${env}")
endfunction()

# The smallest slot the kernels accept (4 KiB), 3 ring channels and 2 tree channels per role:
# 23 MiB of float all-reduce is about 2000 slot loops per ring channel.
set(_pipeline_cases --collective allreduce,allgather,reducescatter --impl ring,tree,best -d float,half,int8
                    -o sum,max -b 4 -e 48M -f 7 -n 2 -w 1 --timeout 60)
ccbench_gpu_pipeline_test(gpu_pipeline_few_channels_2 2
                          "CCBENCH_GPU_SLOT_BYTES=4096;CCBENCH_GPU_CHANNELS=3;CCBENCH_GPU_TREE_CHANNELS=2"
                          ${_pipeline_cases})
# 8 KiB slots with the default channel counts: every channel gets a few uneven loops.
ccbench_gpu_pipeline_test(gpu_pipeline_many_channels_2 2 "CCBENCH_GPU_SLOT_BYTES=8192" ${_pipeline_cases})
# Three ranks on two GPUs: ring steps and tree roles of an odd rank count with small slots.
ccbench_gpu_pipeline_test(gpu_pipeline_three_ranks 3
                          "CCBENCH_GPU_SLOT_BYTES=4096;CCBENCH_GPU_CHANNELS=5;CCBENCH_GPU_TREE_CHANNELS=3"
                          --collective allreduce,allgather,reducescatter --impl ring,tree -d float,bfloat16 -o sum
                          -b 4 -e 24M -f 11 -n 2 -w 1 --timeout 60)
# Buffers misaligned by one element (-u 1) with small slots: the kernels' vector paths must fall
# back correctly, and the guard regions around the offset buffers stay intact.
ccbench_gpu_pipeline_test(gpu_pipeline_misaligned_2 2 "CCBENCH_GPU_SLOT_BYTES=4096;CCBENCH_GPU_CHANNELS=3"
                          --collective allreduce,allgather,reducescatter --impl ring,tree,oneshot,twoshot,ce,nccl
                          -d float,half,int8 -o sum -b 4 -e 6M -f 7 -u 1 -n 2 -w 1 --timeout 60)
