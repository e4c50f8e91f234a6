// A device's identity and profile, worked out once per device for the process.
#include "plan/device_profile.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "profile/store.hpp"

namespace tandem::detail::profile {

Identity identity_for(const gpu::DeviceInfo& d) {
  Identity id;
  id.platform = d.platform;
  id.device = d.name;
  id.driver = d.driver;
  id.compute_units = d.compute_units;
  id.cpu_model = topology::cpu_model();
  id.blas = cpu_blas::name();
  id.blas_version = cpu_blas::version();
  id.blas_core = cpu_blas::core_type();
  id.threads = topology::physical_cores();
  id.architecture = d.architecture;
  return id;
}

std::shared_ptr<const Profile> active_for(const gpu::DeviceInfo& device) {
  // A device's identity (its driver, this CPU, the BLAS) is fixed for the process, so it is
  // worked out once per device; the profile itself is cached by the store alone.
  static std::mutex& mutex = *new std::mutex;
  static auto& identities = *new std::map<int, std::pair<Identity, std::string>>;
  const std::pair<Identity, std::string>* id = nullptr;  // entries are never changed or erased
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = identities.find(device.index);
    if (it == identities.end()) {
      Identity fresh = identity_for(device);
      const std::string name = fresh.file_name();
      it = identities.emplace(device.index, std::make_pair(std::move(fresh), name)).first;
    }
    id = &it->second;
  }
  return active(id->first, id->second);
}

}  // namespace tandem::detail::profile
