# cmake --install: libvicinity.so.0 and libvicinity.a, vicinity.h, the
# CMake package (find_package(Vicinity): Vicinity::vicinity and
# Vicinity::vicinity_static) and vicinity.pc.  Everything is in the
# component "Vicinity" (cmake --install build --component Vicinity).
include(CMakePackageConfigHelpers)
set(VIC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Vicinity)

set(_vic_targets vicinity_shared vicinity_core)
if(VIC_HAVE_CUDA)
  # the static library's users link the kernels' archive and CUDA's libraries
  list(APPEND _vic_targets vicinity_kernels)
  set_target_properties(vicinity_kernels PROPERTIES EXPORT_NAME vicinity_kernels)
endif()
install(TARGETS ${_vic_targets} EXPORT VicinityTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Vicinity NAMELINK_COMPONENT Vicinity
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Vicinity
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Vicinity)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/include/vicinity.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Vicinity)
install(EXPORT VicinityTargets NAMESPACE Vicinity:: DESTINATION ${VIC_CMAKE_DIR} COMPONENT Vicinity)

set(VIC_PACKAGE_WITH_CUDA ${VIC_HAVE_CUDA})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/VicinityConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/VicinityConfig.cmake INSTALL_DESTINATION ${VIC_CMAKE_DIR})
# 0.y releases keep the ABI of 0.2 on, so any later 0.y satisfies a request
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/VicinityConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/VicinityConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/VicinityConfigVersion.cmake
        DESTINATION ${VIC_CMAKE_DIR} COMPONENT Vicinity)

# pkg-config: relocatable (prefix from the .pc file's own place).
# Libs.private lists what a static link needs.
set(VIC_PC_PRIVATE "${OpenMP_C_FLAGS} -lm")
if(VIC_HAVE_BLAS)
  foreach(_lib IN LISTS BLAS_LIBRARIES)
    string(APPEND VIC_PC_PRIVATE " ${_lib}")
  endforeach()
endif()
if(VIC_HAVE_CUDA)
  string(PREPEND VIC_PC_PRIVATE "-lvicinity_kernels ")
  string(APPEND VIC_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcublasLt -lcudart_static -lrt -ldl -lpthread -lstdc++")
endif()
file(RELATIVE_PATH VIC_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" VIC_PC_TO_PREFIX "${VIC_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/vicinity.pc.in ${CMAKE_CURRENT_BINARY_DIR}/vicinity.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vicinity.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Vicinity)
