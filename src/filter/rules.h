// filter/rules.h — include/exclude rules: Python regular expressions searched in co_filename.
#pragma once
#include <Python.h>

#include <vector>

namespace callsite::detail {

/// One rule: its source text (str) and the compiled `re.Pattern` (both strong references).
struct Rule {
  PyObject *source;
  PyObject *pattern;
};

enum class RuleKind { include, exclude };

/// Two ordered lists of rules with MLIR's semantics (Globals.cpp isUserTracebackFilename):
/// a filename is kept when it matches an include rule, or else matches no exclude rule.
class Rules {
 public:
  Rules() = default;
  Rules(const Rules &) = delete;
  Rules &operator=(const Rules &) = delete;
  ~Rules();

  /// Compiles `rule` (a str regex or an re.Pattern) and appends it to `kind`, removing the
  /// same pattern from the other kind (as MLIR's register_traceback_file_* do). A duplicate
  /// is not added twice. Returns 1 when the rules changed, 0 when not, -1 with ValueError
  /// (bad regex: names the pattern and the reason) or TypeError (not a str/Pattern).
  /// Runs Python code (re.compile): not noexcept, so that pthread_exit's forced unwind of a
  /// daemon thread at interpreter exit passes through.
  int add(RuleKind kind, PyObject *rule);

  /// Removes `source` (a pattern string) from both kinds. 1 removed, 0 absent, -1 error.
  int remove(PyObject *source) noexcept;
  void clear() noexcept;
  bool empty() const noexcept { return include_.empty() && exclude_.empty(); }

  /// 1 keep, 0 drop, -1 error: searches the rules in `filename` (a str).
  int keeps(PyObject *filename) const noexcept;

  /// A tuple of the source strings of one kind (new reference).
  PyObject *sources(RuleKind kind) const noexcept;

  /// Copies every rule of `other` (taking references).
  void copy_from(const Rules &other) noexcept;

 private:
  std::vector<Rule> include_, exclude_;
};

/// "^" + re.escape(path): a literal prefix, as MLIR stores a registered file
/// ("^" + llvm::Regex::escape(file)). New reference or nullptr with an error. Runs Python code
/// (re.escape): not noexcept, as add().
PyObject *literal_prefix_pattern(PyObject *path);

/// Imports `re` and interns the names used here; called by the first rule compiled, so
/// that `import callsite` does not import `re`.
bool init_rules() noexcept;

}  // namespace callsite::detail
