#include "db/open_plan_store.hpp"

#include <string_view>

#include "core/error.hpp"
#include "db/postgres_plan_store.hpp"
#include "db/sqlite_outbox.hpp"
#include "db/sqlite_plan_store.hpp"

namespace spmvd {
namespace {

constexpr std::string_view kSqliteScheme = "sqlite://";

// "scheme://" at the start, with a scheme as RFC 3986 spells it; "" when there is none.
std::string_view scheme_of(std::string_view url) {
  const std::size_t end = url.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view scheme = url.substr(0, end);
  const auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_alpha(scheme[0])) return {};
  for (const char c : scheme) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

}  // namespace

PlanStoreLocation parse_plan_store_url(const std::string& url) {
  if (url.empty()) throw_invalid("plan store URL is empty");
  const std::string_view scheme = scheme_of(url);
  if (scheme.empty()) return {PlanStoreKind::sqlite, url};  // a plain path
  if (scheme == "sqlite") {
    std::string path = url.substr(kSqliteScheme.size());
    if (path.empty()) {
      throw_invalid("plan store URL '" + url + "' names no file: use sqlite:///absolute/path.db");
    }
    return {PlanStoreKind::sqlite, std::move(path)};
  }
  if (scheme == "postgresql" || scheme == "postgres") return {PlanStoreKind::postgresql, url};
  throw_invalid("plan store URL '" + displayed_plan_store_url(url) + "' has unknown scheme '" +
                std::string(scheme) +
                "': use sqlite:///path/plans.db, a file path, or postgresql://host/dbname");
}

std::unique_ptr<PlanStore> open_plan_store(const std::string& url) {
  const PlanStoreLocation location = parse_plan_store_url(url);
  if (location.kind == PlanStoreKind::postgresql) {
    return std::make_unique<PostgresPlanStore>(PostgresPlanStoreOptions{.url = location.target});
  }
  return std::make_unique<SqlitePlanStore>(SqlitePlanStoreOptions{.path = location.target});
}

std::unique_ptr<TieredPlanStore> open_tiered_plan_store(const std::string& local_url,
                                                        const std::string& cluster_url,
                                                        TieredPlanStoreOptions options) {
  const PlanStoreLocation local = parse_plan_store_url(local_url);
  if (cluster_url.empty()) return std::make_unique<TieredPlanStore>(open_plan_store(local_url));

  parse_plan_store_url(cluster_url);  // a malformed URL is a configuration error, now
  if (local.kind != PlanStoreKind::sqlite || local.target == ":memory:") {
    throw_invalid("with a cluster store (" + displayed_plan_store_url(cluster_url) +
                  ") the local plan store must be a SQLite file, which also keeps the writes "
                  "the cluster missed; got '" +
                  displayed_plan_store_url(local_url) + "'");
  }
  auto store = open_plan_store(local_url);  // creates and migrates the file the outbox uses
  auto outbox = std::make_unique<SqliteOutbox>(local.target);
  if (options.cluster_name.empty()) options.cluster_name = displayed_plan_store_url(cluster_url);
  return std::make_unique<TieredPlanStore>(std::move(store), std::move(outbox),
                                           [cluster_url] { return open_plan_store(cluster_url); },
                                           std::move(options));
}

std::string displayed_plan_store_url(const std::string& url) { return redact_url_password(url); }

}  // namespace spmvd
