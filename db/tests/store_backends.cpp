#include "db/tests/store_backends.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <pqxx/pqxx>
#include <thread>

#include "db/open_plan_store.hpp"
#include "db/postgres_plan_store.hpp"
#include "db/sqlite_plan_store.hpp"
#include "db/tests/test_sqlite.hpp"

namespace spmvd::test {
namespace {

class SqliteBackend final : public StoreBackend {
 public:
  std::unique_ptr<PlanStore> open() override {
    return std::make_unique<SqlitePlanStore>(SqlitePlanStoreOptions{.path = path_});
  }
  void exec(const std::string& sql) override { RawDb(path_).exec(sql); }
  std::string query(const std::string& sql) override { return RawDb(path_).query(sql); }

 private:
  TempDir dir_;
  std::string path_ = dir_.file("plans.db");
};

class TieredBackend final : public StoreBackend {
 public:
  std::unique_ptr<PlanStore> open() override {
    return open_tiered_plan_store("sqlite://" + local_, "sqlite://" + cluster_);
  }
  void exec(const std::string& sql) override {
    RawDb(local_).exec(sql);
    RawDb(cluster_).exec(sql);
  }
  std::string query(const std::string& sql) override { return RawDb(local_).query(sql); }

 private:
  TempDir dir_;
  std::string local_ = dir_.file("local.db");
  std::string cluster_ = dir_.file("cluster.db");
};

class PostgresBackend final : public StoreBackend {
 public:
  explicit PostgresBackend(std::string server_url) : server_url_(std::move(server_url)) {
    static std::atomic<int> counter{0};
    schema_ = "spmvd_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    // application_name marks the sessions of this schema's stores (wait_for_dead_writers).
    url_ = url_with_search_path(server_url_, schema_) + "&application_name=" + schema_;
    pqxx::connection c(server_url_);
    pqxx::nontransaction(c).exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " +
                                 schema_);
  }
  ~PostgresBackend() override {
    try {
      pqxx::connection c(server_url_);
      pqxx::nontransaction(c).exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
    } catch (const std::exception& e) {
      ADD_FAILURE() << "dropping test schema " << schema_ << ": " << e.what();
    }
  }
  std::unique_ptr<PlanStore> open() override {
    return std::make_unique<PostgresPlanStore>(PostgresPlanStoreOptions{.url = url_});
  }
  void exec(const std::string& sql) override {
    pqxx::connection c(url_);
    pqxx::nontransaction(c).exec(sql);
  }
  std::string query(const std::string& sql) override {
    pqxx::connection c(url_);
    const pqxx::result r = pqxx::nontransaction(c).exec(sql);
    if (r.empty() || r[0][0].is_null()) return "";
    return r[0][0].as<std::string>();
  }
  void wait_for_dead_writers() override {
    pqxx::connection c(server_url_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const pqxx::result r = pqxx::nontransaction(c).exec(
          "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '" + schema_ + "'");
      if (r[0][0].as<int>() == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "sessions of schema " << schema_ << " still open 10 s after their process died";
  }

 private:
  std::string server_url_;
  std::string schema_;
  std::string url_;
};

}  // namespace

std::unique_ptr<StoreBackend> make_sqlite_backend() { return std::make_unique<SqliteBackend>(); }

std::unique_ptr<StoreBackend> make_tiered_backend() { return std::make_unique<TieredBackend>(); }

std::unique_ptr<StoreBackend> make_postgres_backend() {
  const char* url = std::getenv(kPostgresUrlVariable);
  if (url == nullptr || *url == '\0') return nullptr;
  return std::make_unique<PostgresBackend>(url);
}

std::string url_with_search_path(const std::string& url, const std::string& schema) {
  // libpq's "options" parameter: server settings for the session; %3D is '='.
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" +
         schema;
}

}  // namespace spmvd::test
