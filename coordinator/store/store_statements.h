// The store's prepared statements (name, SQL), registered on every pooled connection.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fleetmark::store::internal {

const std::vector<std::pair<std::string, std::string>>& PreparedStatements();

}  // namespace fleetmark::store::internal
