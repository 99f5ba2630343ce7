// Number rendering shared by the report formats: auto-scaled durations and sizes for
// humans, shortest round-trip decimals for machines.
#pragma once

#include <cstdint>
#include <string>

namespace fleetmark::report {

// Duration given in ns, auto-scaled to ns, µs, ms or s with 3 significant digits:
// "850 ns", "1.23 µs", "45.6 ms", "2.00 s". Non-finite or negative input: "-".
std::string FormatNanos(double ns);

// Count with a k/M/G suffix above 9999: "512", "12.3k", "4.56M".
std::string FormatCount(double count);

// Bytes auto-scaled in binary units: "512 B", "12.3 KiB", "4.56 MiB", "1.00 GiB".
// Negative values keep their sign.
std::string FormatBytes(double bytes);

// A value in SI unit `unit` ("J", "W") auto-scaled from nano to kilo with 3 significant
// digits: "850 nJ", "1.23 mJ", "45.6 W", "2.00 kJ"; 0 as "0 J"; negative values (a net
// energy below the idle baseline) keep their sign. Non-finite: "-". Pure.
std::string FormatSi(double value, const char* unit);

// Shortest decimal that parses back to the same double (std::to_chars); "inf",
// "-inf", "nan" for non-finite values.
std::string ShortestDouble(double value);

}  // namespace fleetmark::report
