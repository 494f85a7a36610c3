// Numbers for people in tables: 230K, 2.89B, 1.2T with units; exact values stay in JSON.
#pragma once
#include <string>

namespace meshplan {

/// A count with a K/M/B/T suffix and 3 significant digits: 229952 -> "230K", 2.88675e9 -> "2.89B",
/// 1.0e12 -> "1T", 512 -> "512", 0.25 -> "0.25". `unit`, when given, follows after a space
/// ("2.89B params"). Non-finite values print as inf/nan.
std::string human_count(double v, const std::string& unit = "");

/// Scientific notation for people: 8.4e23 -> "8.4e23", 1e21 -> "1e21" (3 significant digits, no
/// "+" or leading zeros in the exponent); |v| < 1e4 prints plainly.
std::string human_scientific(double v);

/// A duration in the largest unit that keeps it >= 1: "1.23 s", "45.6 ms", "789 us", and
/// "2.5 h" / "3.1 days" for long ones; 3 significant digits.
std::string human_seconds(double seconds);

/// Bytes with the largest decimal unit (kB/MB/GB/TB, powers of 1000, as the tables' GB) that keeps
/// the value >= 1, 3 significant digits: 12.3e6 -> "12.3 MB", 2.5e11 -> "250 GB".
std::string human_bytes(double bytes);

}  // namespace meshplan
