// What every filter test needs: a CHECK that counts failures instead of
// stopping (so one run reports every broken check), a listener that keeps
// a filter's error and warning messages, and one that aborts a filter at
// its first progress report.
#ifndef VIC_FILTER_TEST_UTIL_H
#define VIC_FILTER_TEST_UTIL_H

#include <vtkAlgorithm.h>
#include <vtkCommand.h>

#include <cstdio>
#include <string>
#include <vector>

// One counter per test executable (each test is a single .cxx).
static int failures = 0;
#define CHECK(cond, what)                                                                          \
  do                                                                                               \
  {                                                                                                \
    if (!(cond))                                                                                   \
    {                                                                                              \
      std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", __FILE__, __LINE__, #cond,             \
        std::string(what).c_str());                                                                \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

// Collects error and warning messages of a filter.
class MessageLog : public vtkCommand
{
public:
  static MessageLog* New() { return new MessageLog; }
  void Execute(vtkObject*, unsigned long event, void* data) override
  {
    std::string m = data ? static_cast<const char*>(data) : "";
    (event == vtkCommand::ErrorEvent ? this->Errors : this->Warnings).push_back(m);
  }
  void Clear()
  {
    this->Errors.clear();
    this->Warnings.clear();
  }
  bool ErrorContains(const std::string& s) const
  {
    for (const auto& e : this->Errors)
      if (e.find(s) != std::string::npos)
        return true;
    return false;
  }
  std::vector<std::string> Errors, Warnings;
};

// Aborts the filter at its first progress report.
class AbortOnProgress : public vtkCommand
{
public:
  static AbortOnProgress* New() { return new AbortOnProgress; }
  void Execute(vtkObject* caller, unsigned long, void*) override
  {
    static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
  }
};

#endif
