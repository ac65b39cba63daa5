// clang-15 and llvm-spirv-15 run inside the driver's process: a C interface over the C++
// libraries those two tools are built on (libclang-cpp.so.15, libLLVMSPIRVLib.so.15), for
// opencl-c/src/llvm_tools.rs. Built by opencl-c/build.rs into a shared object that the driver
// loads on its first OpenCL C build, so that applications that never build OpenCL C never map
// clang.
//
// Why: each build started clang and llvm-spirv as processes, and most of what each cost was
// starting up (mapping and relocating libclang-cpp and libLLVM, about 25 ms each on 2 cores);
// loaded once, the libraries do the same work on the same input, with the same output.
//
// Nothing here throws across the C boundary: LLVM and clang are built without exceptions, and
// what the standard library could throw (allocation failure) is caught at each entry point.

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Driver/Tool.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/FrontendTool/Utils.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <LLVMSPIRVLib/LLVMSPIRVLib.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A malloc'd copy of `text`, for the Rust side to release with ferrocl_llvm_tools_free.
char *copy_out(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out) {
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\0';
  }
  return out;
}

// clang's driver and its cc1 step on `argv`, as `clang-15 argv...` would run them, with every
// diagnostic (the driver's and the compiler's) written to `log`.
bool run_clang(const std::vector<const char *> &argv, std::string &log) {
  llvm::raw_string_ostream log_stream(log);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> driver_options =
      new clang::DiagnosticOptions();
  clang::TextDiagnosticPrinter driver_printer(log_stream, driver_options.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> driver_diagnostics =
      new clang::DiagnosticsEngine(new clang::DiagnosticIDs(), driver_options,
                                   &driver_printer, false);
  // The driver's one job is the cc1 compile, whose arguments make the invocation, as in
  // clang's own driver (clang::createInvocation would add -fsyntax-only).
  clang::driver::Driver driver(argv[0], llvm::sys::getDefaultTargetTriple(),
                               *driver_diagnostics);
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(argv));
  if (!compilation || compilation->containsError() ||
      driver_diagnostics->hasErrorOccurred()) {
    log_stream.flush();
    return false;
  }
  const clang::driver::JobList &jobs = compilation->getJobs();
  if (jobs.size() != 1 ||
      llvm::StringRef(jobs.begin()->getCreator().getName()) != "clang") {
    log_stream << "error: the clang driver planned " << jobs.size()
               << " jobs where one compile was expected\n";
    log_stream.flush();
    return false;
  }
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation,
                                                 jobs.begin()->getArguments(),
                                                 *driver_diagnostics, argv[0])) {
    log_stream.flush();
    return false;
  }
  // The driver asks cc1 not to free its memory at exit (-disable-free), which a process
  // that goes on building must not do.
  invocation->getFrontendOpts().DisableFree = false;
  clang::CompilerInstance compiler;
  compiler.setInvocation(invocation);
  clang::TextDiagnosticPrinter *printer = new clang::TextDiagnosticPrinter(
      log_stream, &invocation->getDiagnosticOpts());
  compiler.createDiagnostics(printer, /*ShouldOwnClient=*/true);
  bool success = clang::ExecuteCompilerInvocation(&compiler);
  log_stream.flush();
  return success && !compiler.getDiagnostics().hasErrorOccurred();
}

// llvm-spirv's --spirv-ext: every known extension off, then each `+NAME` / `-NAME` / `+all` /
// `-all` of the comma-separated list in order. False for a name the translator does not know.
bool parse_extensions(const std::string &list,
                      SPIRV::TranslatorOpts::ExtensionsStatusMap &status,
                      std::string &log) {
  std::map<std::string, SPIRV::ExtensionID> known;
#define EXT(X) known[#X] = SPIRV::ExtensionID::X;
#include <LLVMSPIRVLib/LLVMSPIRVExtensions.inc>
#undef EXT
  for (const auto &entry : known)
    status[entry.second] = false;
  std::stringstream words(list);
  std::string word;
  while (std::getline(words, word, ',')) {
    if (word.size() < 2 || (word[0] != '+' && word[0] != '-')) {
      log += "Invalid value of --spirv-ext: '" + word + "'\n";
      return false;
    }
    bool enabled = word[0] == '+';
    std::string name = word.substr(1);
    if (name == "all") {
      for (const auto &entry : known)
        status[entry.second] = enabled;
    } else if (known.count(name)) {
      status[known[name]] = enabled;
    } else {
      log += "Unknown extension '" + name + "' was specified via --spirv-ext option\n";
      return false;
    }
  }
  return true;
}

// llvm-spirv on an LLVM module (bitcode or textual IR), as `llvm-spirv-15
// --spirv-max-version=<max_version> --spirv-ext=<extensions>` with, when
// `preserve_arg_type_strings`, `--preserve-ocl-kernel-arg-type-metadata-through-string`.
bool translate(const char *ir, size_t ir_size, unsigned max_version,
               const std::string &extensions, bool preserve_arg_type_strings,
               std::string &spirv, std::string &log) {
  SPIRV::TranslatorOpts::ExtensionsStatusMap status;
  if (!parse_extensions(extensions, status, log))
    return false;
  SPIRV::TranslatorOpts options(static_cast<SPIRV::VersionNumber>(max_version), status);
  options.setPreserveOCLKernelArgTypeMetadataThroughString(preserve_arg_type_strings);
  llvm::LLVMContext context;
  llvm::SMDiagnostic parse_error;
  // A copy: textual IR is read up to a NUL byte, which the caller's bytes need not have.
  std::unique_ptr<llvm::MemoryBuffer> input =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(ir, ir_size), "input");
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(input->getMemBufferRef(), parse_error, context);
  if (!module) {
    llvm::raw_string_ostream log_stream(log);
    parse_error.print("llvm-spirv", log_stream);
    return false;
  }
  std::ostringstream out;
  std::string error;
  if (!llvm::writeSpirv(module.get(), options, out, error)) {
    log += "Fails to save LLVM as SPIR-V: " + error + "\n";
    return false;
  }
  spirv = out.str();
  return true;
}

} // namespace

extern "C" {

// Runs clang on argv[0..argc) (argv[0] the clang executable's path, from which clang finds its
// resource directory and opencl-c.h). Returns 1 on success, 0 on failure; *log receives the
// diagnostics either way (NULL if there were none or no memory).
int ferrocl_llvm_tools_clang(const char *const *argv, size_t argc, char **log) {
  *log = nullptr;
  try {
    std::vector<const char *> args(argv, argv + argc);
    std::string text;
    bool success = run_clang(args, text);
    if (!text.empty())
      *log = copy_out(text);
    return success ? 1 : 0;
  } catch (...) {
    *log = copy_out("error: clang ran out of memory\n");
    return 0;
  }
}

// Translates the module in ir[0..ir_size) to SPIR-V. Returns 1 on success with *spirv and
// *spirv_size the binary (free it with ferrocl_llvm_tools_free), 0 on failure with *log the
// reason.
int ferrocl_llvm_tools_translate(const char *ir, size_t ir_size, unsigned max_version,
                                 const char *extensions, int preserve_arg_type_strings,
                                 char **spirv, size_t *spirv_size, char **log) {
  *spirv = nullptr;
  *spirv_size = 0;
  *log = nullptr;
  try {
    std::string binary, text;
    bool success = translate(ir, ir_size, max_version, extensions,
                             preserve_arg_type_strings != 0, binary, text);
    if (!text.empty())
      *log = copy_out(text);
    if (!success)
      return 0;
    *spirv = static_cast<char *>(std::malloc(binary.size() ? binary.size() : 1));
    if (!*spirv)
      return 0;
    std::memcpy(*spirv, binary.data(), binary.size());
    *spirv_size = binary.size();
    return 1;
  } catch (...) {
    *log = copy_out("error: llvm-spirv ran out of memory\n");
    return 0;
  }
}

void ferrocl_llvm_tools_free(void *pointer) { std::free(pointer); }

} // extern "C"
