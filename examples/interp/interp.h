// examples/interp/interp.h — "calc", a tiny statement language interpreted in C++, whose
// interpreted frames show up in callsite captures and Python tracebacks (header-only, so both
// the standalone example module and callsite's own demo compile the same interpreter).
//
//   fn area(w, h)            # functions; values are floats
//     let a = w * h          # let / return / if [else] end / while end / expression
//     return scale(a)        # calls: calc functions, or Python callables from `host`
//   end
//
// Each interpreted call pushes a callsite::NativeFrame whose executable is the function (made
// at run time with callsite::api::new_executable) and whose state is the id of the statement or
// call being run; the reifier maps that id back to the program's file, line and columns, and
// the frame's variables (its environment) are what env_locals reads when someone looks.
#pragma once
#include <Python.h>
#include <structmember.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "callsite/api.h"

namespace calc {

struct Span {
  int line, col, end_col;  // 1-based line, 0-based columns, end exclusive
};

struct Expr {
  enum Kind { number, variable, unary, binary, call } kind;
  double value = 0;
  std::string name;  // variable / callee / operator
  std::vector<Expr> args;
  int node = -1;  // calls: the id of the call's span
};

struct Stmt {
  enum Kind { let, ret, when, loop, expr } kind;
  std::string name;
  Expr value{Expr::number};
  std::vector<Stmt> body, orelse;
  int node = -1;
};

struct Function {
  std::string name;
  std::vector<std::string> params;
  std::vector<Stmt> body;
  int node = -1;
  const callsite::Executable *executable = nullptr;
  const callsite::VisibleCode *visible = nullptr;  // Program(..., visible=True)
};

struct ProgramData {
  std::string filename;
  std::vector<Span> spans;  // by node id: what the reifier reports
  std::vector<int> function_of_node;
  std::vector<Function> functions;
  std::unordered_map<std::string, int> by_name;
};

// --- parsing -------------------------------------------------------------------------------

struct Token {
  enum Kind { num, name, op, newline, eof } kind;
  std::string text;
  int line, col;
};

inline bool tokenize(const std::string &src, std::vector<Token> *out, std::string *error) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < src.size();) {
    const char c = src[i];
    const int col = int(i - line_start);
    if (c == '\n') {
      out->push_back({Token::newline, "\n", line, col});
      ++line, ++i, line_start = i;
    } else if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      std::size_t j = i;
      while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '.'))
        ++j;
      out->push_back({Token::num, src.substr(i, j - i), line, col});
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        ++j;
      out->push_back({Token::name, src.substr(i, j - i), line, col});
      i = j;
    } else {
      static const char *const two[] = {"<=", ">=", "==", "!="};
      std::string text(1, c);
      for (const char *t : two)
        if (src.compare(i, 2, t) == 0) text = t;
      if (text.size() == 1 && !std::strchr("+-*/%<>=(),", c)) {
        *error = "line " + std::to_string(line) + ": unexpected character '" + text + "'";
        return false;
      }
      out->push_back({Token::op, text, line, col});
      i += text.size();
    }
  }
  out->push_back({Token::newline, "\n", line, int(src.size() - line_start)});
  out->push_back({Token::eof, "", line, 0});
  return true;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, ProgramData *program)
      : t_(std::move(tokens)), p_(program) {}

  bool parse(std::string *error) {
    try {
      skip_newlines();
      while (peek().kind != Token::eof) {
        parse_function();
        skip_newlines();
      }
      return true;
    } catch (const std::string &message) {
      *error = message;
      return false;
    }
  }

 private:
  const Token &peek(int ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token &next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is(const char *text) const { return peek().kind != Token::eof && peek().text == text; }
  [[noreturn]] void fail(const std::string &what) const {
    throw std::string("line ") + std::to_string(peek().line) + ": " + what + ", found '" +
        (peek().kind == Token::newline ? std::string("end of line")
         : peek().kind == Token::eof   ? std::string("end of file")
                                       : peek().text) + "'";
  }
  void expect(const char *text) {
    if (!is(text)) fail(std::string("expected '") + text + "'");
    ++i_;
  }
  std::string expect_name() {
    if (peek().kind != Token::name) fail("expected a name");
    return next().text;
  }
  void skip_newlines() {
    while (peek().kind == Token::newline) ++i_;
  }
  void end_of_line() {
    if (peek().kind != Token::newline) fail("expected end of line");
    skip_newlines();
  }
  // A node for the source span from token `first` to the last consumed token.
  int node(std::size_t first) {
    const Token &a = t_[first], &b = t_[i_ - 1];
    p_->spans.push_back({a.line, a.col, b.col + int(b.text.size())});
    p_->function_of_node.push_back(current_);
    return int(p_->spans.size()) - 1;
  }

  void parse_function() {
    const std::size_t first = i_;
    current_ = int(p_->functions.size());
    expect("fn");
    Function f;
    f.name = expect_name();
    expect("(");
    while (!is(")")) {
      f.params.push_back(expect_name());
      if (!is(")")) expect(",");
    }
    expect(")");
    f.node = node(first);
    end_of_line();
    if (p_->by_name.count(f.name)) throw "line " + std::to_string(t_[first].line) +
                                          ": function '" + f.name + "' defined twice";
    p_->by_name[f.name] = int(p_->functions.size());
    p_->functions.push_back(std::move(f));
    p_->functions.back().body = block();
    expect("end");
    end_of_line();
  }

  std::vector<Stmt> block() {
    std::vector<Stmt> body;
    while (!is("end") && !is("else")) {
      if (peek().kind == Token::eof) fail("expected 'end'");
      body.push_back(statement());
    }
    return body;
  }

  Stmt statement() {
    const std::size_t first = i_;
    Stmt s{Stmt::expr};
    if (is("let")) {
      ++i_;
      s.kind = Stmt::let;
      s.name = expect_name();
      expect("=");
      s.value = expression();
    } else if (is("return")) {
      ++i_;
      s.kind = Stmt::ret;
      s.value = expression();
    } else if (is("if") || is("while")) {
      s.kind = is("if") ? Stmt::when : Stmt::loop;
      ++i_;
      s.value = expression();
      s.node = node(first);
      end_of_line();
      s.body = block();
      if (s.kind == Stmt::when && is("else")) {
        ++i_;
        end_of_line();
        s.orelse = block();
      }
      expect("end");
      end_of_line();
      return s;
    } else {
      s.value = expression();
    }
    s.node = node(first);
    end_of_line();
    return s;
  }

  Expr binary(int level) {
    static const std::vector<std::vector<std::string>> levels = {
        {"<", "<=", ">", ">=", "==", "!="}, {"+", "-"}, {"*", "/", "%"}};
    if (level == int(levels.size())) return unary();
    Expr left = binary(level + 1);
    for (;;) {
      bool found = false;
      for (const std::string &op : levels[level]) found = found || (peek().kind == Token::op && peek().text == op);
      if (!found) return left;
      Expr e{Expr::binary};
      e.name = next().text;
      e.args.push_back(std::move(left));
      e.args.push_back(binary(level + 1));
      left = std::move(e);
    }
  }
  Expr expression() { return binary(0); }

  Expr unary() {
    if (is("-")) {
      ++i_;
      Expr e{Expr::unary};
      e.name = "-";
      e.args.push_back(unary());
      return e;
    }
    return primary();
  }

  Expr primary() {
    const std::size_t first = i_;
    if (peek().kind == Token::num) {
      Expr e{Expr::number};
      char *end = nullptr;
      const std::string text = next().text;
      e.value = std::strtod(text.c_str(), &end);
      if (*end) throw "line " + std::to_string(t_[first].line) + ": bad number '" + text + "'";
      return e;
    }
    if (is("(")) {
      ++i_;
      Expr e = expression();
      expect(")");
      return e;
    }
    if (peek().kind != Token::name) fail("expected an expression");
    Expr e{Expr::variable};
    e.name = next().text;
    if (!is("(")) return e;
    ++i_;
    e.kind = Expr::call;
    while (!is(")")) {
      e.args.push_back(expression());
      if (!is(")")) expect(",");
    }
    expect(")");
    e.node = node(first);
    return e;
  }

  std::vector<Token> t_;
  std::size_t i_ = 0;
  int current_ = 0;  // index of the function being parsed
  ProgramData *p_;
};

// --- the reifier ---------------------------------------------------------------------------

// Executables made at run time own a heap shared_ptr to the program, so a Traceback that
// outlives the Program object can still be symbolized.
inline void free_program_ref(void *p) { delete static_cast<std::shared_ptr<ProgramData> *>(p); }

inline int reify(const callsite::Executable *exe, std::uintptr_t state,
                 callsite::NativeLocation *out) noexcept {
  const ProgramData &p = **static_cast<std::shared_ptr<ProgramData> *>(exe->user_data);
  if (state >= p.spans.size()) return -1;  // not a node id: callsite shows a placeholder
  const Span &s = p.spans[state];
  out->filename = p.filename.c_str();
  out->name = p.functions[std::size_t(p.function_of_node[state])].name.c_str();
  out->lineno = out->end_lineno = s.line;
  out->colno = s.col;
  out->end_colno = s.end_col;
  return 0;
}

// The variables of one interpreted call: its environment (parameters and lets), as a dict of
// floats. A per-frame locals reifier (callsite::NativeFrameWithLocals): callsite calls it only
// when something reads the frame's variables (pdb, a traceback's frame, frame.f_locals).
inline PyObject *env_locals(const callsite::Executable *, std::uintptr_t, void *context) {
  const auto &env = *static_cast<const std::unordered_map<std::string, double> *>(context);
  PyObject *dict = PyDict_New();
  for (const auto &[name, value] : env) {
    PyObject *v = dict ? PyFloat_FromDouble(value) : nullptr;
    if (!v || PyDict_SetItemString(dict, name.c_str(), v) < 0) {
      Py_XDECREF(v);
      Py_XDECREF(dict);
      return nullptr;
    }
    Py_DECREF(v);
  }
  return dict;
}

// --- evaluation ----------------------------------------------------------------------------

class Interpreter {
 public:
  Interpreter(const ProgramData &p, PyObject *host) : p_(p), host_(host) {}

  // Calls function `index` in a native frame of its own. False: a Python error is set, and
  // this frame's traceback entry has been added to it.
  bool call(int index, const std::vector<double> &args, double *out) {
    const Function &f = p_.functions[std::size_t(index)];
    if (args.size() != f.params.size()) {  // the caller's error, as in Python
      PyErr_Format(PyExc_TypeError, "calc: %s() takes %zu arguments (%zu given)",
                   f.name.c_str(), f.params.size(), args.size());
      return false;
    }
    // Declared before the frame, so it outlives the frame's last read of it (at the pop).
    std::unordered_map<std::string, double> env;
    callsite::NativeFrameWithLocals frame(*f.executable, std::uintptr_t(f.node), f.visible,
                                          &env_locals, &env);
    if (++depth_ > 200) {
      --depth_;
      PyErr_SetString(PyExc_RecursionError, "calc: maximum recursion depth exceeded");
      frame.add_traceback();
      return false;
    }
    for (std::size_t i = 0; i < args.size(); ++i) env[f.params[i]] = args[i];
    bool returned = false;
    *out = 0;
    const bool ok = run(f.body, env, frame, &returned, out);
    --depth_;
    if (!ok) frame.add_traceback();  // at the state of the failing statement or call
    return ok;
  }

 private:
  using Env = std::unordered_map<std::string, double>;

  bool run(const std::vector<Stmt> &body, Env &env, callsite::NativeFrame &frame, bool *returned,
           double *out) {
    for (const Stmt &s : body) {
      frame.set_state(std::uintptr_t(s.node));
      double v = 0;
      if (!eval(s.value, env, frame, &v)) return false;
      frame.set_state(std::uintptr_t(s.node));  // back from any call inside the statement
      switch (s.kind) {
        case Stmt::let: env[s.name] = v; break;
        case Stmt::ret: *returned = true, *out = v; return true;
        case Stmt::expr: break;
        case Stmt::when:
          if (!run(v != 0 ? s.body : s.orelse, env, frame, returned, out)) return false;
          if (*returned) return true;
          break;
        case Stmt::loop:
          while (v != 0) {
            if (!run(s.body, env, frame, returned, out)) return false;
            if (*returned) return true;
            frame.set_state(std::uintptr_t(s.node));
            if (!eval(s.value, env, frame, &v)) return false;
          }
          break;
      }
    }
    return true;
  }

  bool eval(const Expr &e, Env &env, callsite::NativeFrame &frame, double *out) {
    switch (e.kind) {
      case Expr::number: *out = e.value; return true;
      case Expr::variable: {
        auto it = env.find(e.name);
        if (it == env.end()) {
          PyErr_Format(PyExc_NameError, "calc: name '%s' is not defined", e.name.c_str());
          return false;
        }
        *out = it->second;
        return true;
      }
      case Expr::unary:
        if (!eval(e.args[0], env, frame, out)) return false;
        *out = -*out;
        return true;
      case Expr::binary: return binary(e, env, frame, out);
      case Expr::call: break;
    }
    std::vector<double> args(e.args.size());
    for (std::size_t i = 0; i < args.size(); ++i)
      if (!eval(e.args[i], env, frame, &args[i])) return false;
    frame.set_state(std::uintptr_t(e.node));  // the call's own columns while it runs
    if (auto it = p_.by_name.find(e.name); it != p_.by_name.end())
      return call(it->second, args, out);
    return call_host(e.name, args, out);
  }

  bool binary(const Expr &e, Env &env, callsite::NativeFrame &frame, double *out) {
    double a = 0, b = 0;
    if (!eval(e.args[0], env, frame, &a) || !eval(e.args[1], env, frame, &b)) return false;
    const std::string &op = e.name;
    if ((op == "/" || op == "%") && b == 0) {
      PyErr_SetString(PyExc_ZeroDivisionError, "calc: division by zero");
      return false;
    }
    *out = op == "+"    ? a + b
           : op == "-"  ? a - b
           : op == "*"  ? a * b
           : op == "/"  ? a / b
           : op == "%"  ? std::fmod(a, b)
           : op == "<"  ? double(a < b)
           : op == "<=" ? double(a <= b)
           : op == ">"  ? double(a > b)
           : op == ">=" ? double(a >= b)
           : op == "==" ? double(a == b)
                        : double(a != b);
    return true;
  }

  // A Python callable from the host mapping: called with floats, must return a number.
  bool call_host(const std::string &name, const std::vector<double> &args, double *out) {
    PyObject *fn = host_ ? PyMapping_GetItemString(host_, name.c_str()) : nullptr;
    if (!fn) {
      PyErr_Clear();
      PyErr_Format(PyExc_NameError, "calc: function '%s' is not defined (not in the program "
                   "nor in host)", name.c_str());
      return false;
    }
    PyObject *tuple = PyTuple_New(Py_ssize_t(args.size()));
    for (std::size_t i = 0; tuple && i < args.size(); ++i)
      PyTuple_SET_ITEM(tuple, Py_ssize_t(i), PyFloat_FromDouble(args[i]));
    PyObject *result = tuple ? PyObject_Call(fn, tuple, nullptr) : nullptr;
    Py_XDECREF(tuple);
    Py_DECREF(fn);
    if (!result) return false;
    *out = PyFloat_AsDouble(result);
    Py_DECREF(result);
    return !(*out == -1 && PyErr_Occurred());
  }

  const ProgramData &p_;
  PyObject *host_;
  int depth_ = 0;
};

// --- the Python type: Program(source, filename="<calc>", host=None, *, visible=False) -------

struct ProgramObject {
  PyObject_HEAD
  std::shared_ptr<ProgramData> *data;
  PyObject *executables;  // list: one callsite.native.Executable per function
  PyObject *host;
  PyObject *weakrefs;
};

// Tracebacks print source lines through linecache; register the program's text so they do
// even when it never was a file (mtime None: checkcache leaves it alone).
inline void register_source(PyObject *filename, PyObject *source) {
  PyObject *linecache = PyImport_ImportModule("linecache");
  PyObject *cache = linecache ? PyObject_GetAttrString(linecache, "cache") : nullptr;
  PyObject *lines = source ? PyObject_CallMethod(source, "splitlines", "O", Py_True) : nullptr;
  PyObject *entry = lines ? Py_BuildValue("(nOOO)", PyUnicode_GetLength(source), Py_None,
                                          lines, filename)
                          : nullptr;
  if (!entry || !cache || PyObject_SetItem(cache, filename, entry) < 0) PyErr_Clear();
  Py_XDECREF(entry);
  Py_XDECREF(lines);
  Py_XDECREF(cache);
  Py_XDECREF(linecache);
}

inline PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"source", "filename", "host", "visible", nullptr};
  PyObject *source, *filename = nullptr, *host = Py_None;
  int visible = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|UO$p:Program", const_cast<char **>(kwlist),
                                   &source, &filename, &host, &visible))
    return nullptr;
  if (host != Py_None && !PyMapping_Check(host))
    return PyErr_Format(PyExc_TypeError, "host must be a mapping of name to callable, not %.200s",
                        Py_TYPE(host)->tp_name);
  auto data = std::make_shared<ProgramData>();
  const char *file = filename ? PyUnicode_AsUTF8(filename) : "<calc>";
  const char *text = file ? PyUnicode_AsUTF8(source) : nullptr;
  if (!text) return nullptr;
  data->filename = file;
  std::vector<Token> tokens;
  std::string error;
  if (!tokenize(text, &tokens, &error) || !Parser(std::move(tokens), data.get()).parse(&error))
    return PyErr_Format(PyExc_SyntaxError, "%s: %s", file, error.c_str());
  PyObject *executables = PyList_New(0);
  if (!executables) return nullptr;
  for (Function &f : data->functions) {
    PyObject *exe = callsite::api::new_executable(f.name.c_str(), "calc", &reify,
                                               new std::shared_ptr<ProgramData>(data),
                                               &free_program_ref);
    if (!exe || PyList_Append(executables, exe) < 0) {
      Py_XDECREF(exe);
      Py_DECREF(executables);
      return nullptr;
    }
    Py_DECREF(exe);
    f.executable = callsite::api::executable_of(exe);  // kept alive by the list
    // visible: every statement and call id is a state, so profilers, faulthandler and
    // tracebacks read the line of the running node from the synthetic code object.
    if (visible && !(f.visible = callsite::api::visible_code(*f.executable, data->spans.size())) &&
        PyErr_Occurred()) {
      Py_DECREF(executables);
      return nullptr;
    }
  }
  auto *self = reinterpret_cast<ProgramObject *>(type->tp_alloc(type, 0));
  if (!self) {
    Py_DECREF(executables);
    return nullptr;
  }
  self->data = new std::shared_ptr<ProgramData>(std::move(data));
  self->executables = executables;
  self->host = Py_NewRef(host);
  PyObject *name = filename ? Py_NewRef(filename) : PyUnicode_FromString(file);
  if (name) register_source(name, source);
  Py_XDECREF(name);
  return reinterpret_cast<PyObject *>(self);
}

inline void program_dealloc(PyObject *self) {
  auto *p = reinterpret_cast<ProgramObject *>(self);
  if (p->weakrefs) PyObject_ClearWeakRefs(self);
  delete p->data;
  Py_XDECREF(p->executables);
  Py_XDECREF(p->host);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

// program.call(name, *args) -> float
inline PyObject *program_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  auto *p = reinterpret_cast<ProgramObject *>(self);
  if (nargs < 1 || !PyUnicode_Check(args[0]))
    return PyErr_Format(PyExc_TypeError, "call(name, *args): name must be a str");
  const ProgramData &data = **p->data;
  const char *name = PyUnicode_AsUTF8(args[0]);
  if (!name) return nullptr;
  auto it = data.by_name.find(name);
  if (it == data.by_name.end())
    return PyErr_Format(PyExc_NameError, "calc: no function '%s' in %s", name,
                        data.filename.c_str());
  std::vector<double> values;
  for (Py_ssize_t i = 1; i < nargs; ++i) {
    const double v = PyFloat_AsDouble(args[i]);
    if (v == -1 && PyErr_Occurred()) return nullptr;
    values.push_back(v);
  }
  double result = 0;
  if (!Interpreter(data, p->host == Py_None ? nullptr : p->host).call(it->second, values, &result))
    return nullptr;
  return PyFloat_FromDouble(result);
}

inline PyObject *program_executables(PyObject *self, void *) {
  return PyList_AsTuple(reinterpret_cast<ProgramObject *>(self)->executables);
}

/// Creates the Program type, named `qualified_name` (e.g. "calc.Program").
inline PyTypeObject *make_program_type(const char *qualified_name) {
  static PyMethodDef methods[] = {
      {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(program_call)),
       METH_FASTCALL, "call(name, *args) -> float: runs a function of the program."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {
      {"executables", program_executables, nullptr,
       "tuple[callsite.native.Executable, ...]: one per function", nullptr},
      {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyMemberDef members[] = {
      {"__weaklistoffset__", T_PYSSIZET, offsetof(ProgramObject, weakrefs), READONLY, nullptr},
      {nullptr, 0, 0, 0, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_doc, const_cast<char *>(
                      "Program(source, filename='<calc>', host=None, *, visible=False): a parsed calc "
                      "program; visible=True makes its frames real interpreter frames; "
                      "host maps names to Python callables the program may call.")},
      {Py_tp_new, reinterpret_cast<void *>(program_new)},
      {Py_tp_dealloc, reinterpret_cast<void *>(program_dealloc)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_members, members},
      {0, nullptr}};
  static PyType_Spec spec = {qualified_name, int(sizeof(ProgramObject)), 0, Py_TPFLAGS_DEFAULT,
                             slots};
  return reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&spec));
}

}  // namespace calc
