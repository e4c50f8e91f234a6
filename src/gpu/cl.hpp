// The one include of the OpenCL C++ header (opencl.hpp), with the settings every OpenCL file of
// tandem is built with. Only files in src/gpu include this; the rest of tandem sees no OpenCL.
#pragma once

// OpenCL 1.2: the newest version NVIDIA's, AMD's, Intel's and PoCL's drivers all implement, and
// all tandem uses. Every failing status throws cl::Error, which src/gpu/errors.hpp turns into a
// tandem::Error naming the call.
#define CL_TARGET_OPENCL_VERSION 120
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_ENABLE_EXCEPTIONS

#include <CL/opencl.hpp>
