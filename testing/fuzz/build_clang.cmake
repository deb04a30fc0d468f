# fuzz.build: configures and builds the Clang tree of testing/fuzz (the core
# and the loaders with ASan+UBSan and libFuzzer's hooks, then the fuzz
# targets).  cmake -DSRC=source -DBIN=build-dir -DCC=clang -DCXX=clang++ -P build_clang.cmake
set(flags "-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=${CC}
          -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_C_FLAGS=${flags}" -DVIC_FUZZ=ON -DVIC_CUDA=OFF -DVIC_PLUGIN=OFF
          -DVIC_SANITIZE_TESTS=OFF
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the Clang build failed")
endif()
include(ProcessorCount)
ProcessorCount(jobs)
if(jobs EQUAL 0)
  set(jobs 2)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} -j ${jobs} --target vicinity_core vic_io fuzz_loaders fuzz_index_load fuzz_seeds
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the core and the fuzz targets with Clang failed")
endif()
