// OpenCL failures as tandem errors: every status is named, with the call that returned it.
#pragma once

#include <string>

#include "gpu/cl.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::gpu {

// The status's name ("CL_OUT_OF_RESOURCES"), or "CL error" for one tandem does not name.
const char* status_name(cl_int code);

// Error (OpenCL) "<call> failed: <status name> (<code>)[: detail]".
Error opencl_error(const std::string& call, cl_int code, const std::string& detail = {});

// The same for a cl::Error that opencl.hpp threw.
Error translate(const cl::Error& e, const std::string& detail = {});

}  // namespace tandem::detail::gpu
