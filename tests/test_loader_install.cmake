# CTest: install cutune into a temporary prefix, then configure and build
# examples/ as a separate CMake project against it, as an application would. Without a GPU
# the example must say so and exit 3; it must not link libcuda (the driver is dlopen()ed).
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -P test_loader_install.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} not given")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f include/cutune/loader/loader.hpp lib/cmake/cutune/cutuneConfig.cmake
          lib/cmake/cutune/cutuneConfigVersion.cmake lib/cmake/cutune/cutuneTargets.cmake
          share/cutune/kernel_templates/reduction/reduction.json share/cutune/kernel_templates/matmul/matmul.cu)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
if(EXISTS "${prefix}/share/cutune/kernel_templates/reduction/reference.cpp")
  message(FATAL_ERROR "the CPU references are not templates: reference.cpp installed")
endif()

# A fresh project: only the installed package, nothing from this build tree.
run("configure examples" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "-DCMAKE_PREFIX_PATH=${prefix}")
run("build examples" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
set(example "${WORK_DIR}/build/cutune-example")

execute_process(COMMAND readelf -d "${example}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(rc EQUAL 0 AND dynamic MATCHES "libcuda\\.so")
  message(FATAL_ERROR "cutune-example links libcuda:\n${dynamic}")
endif()

# The application finds the templates through the installed package: the package defines
# where they are for it (relative to the prefix it was found in).
file(READ "${WORK_DIR}/build/compile_commands.json" flags)
if(NOT flags MATCHES "CUTUNE_INSTALLED_TEMPLATE_DIR=[^ ]*share/cutune/kernel_templates")
  message(FATAL_ERROR "CUTUNE_INSTALLED_TEMPLATE_DIR not defined for the application:\n${flags}")
endif()

execute_process(COMMAND "${example}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(err MATCHES "no GPU here")
  if(NOT rc EQUAL 3)
    message(FATAL_ERROR "without a GPU cutune-example must exit 3, got ${rc}: ${err}")
  endif()
  message(STATUS "no GPU: cutune-example said so and exited 3")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "cutune-example failed (${rc}):\n${out}\n${err}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
