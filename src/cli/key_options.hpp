// The key options shared by gpusort-file and gpusort-check (CLI.md): --type, --key,
// --record-size, --format gensort and --descending, added to a Boost.Program_options description
// and turned, by one set of rules, into the key of a file: the whole record one key of a type, or
// records with a key spec.
#pragma once

#include "gpusort/key_spec.hpp"
#include "gpusort/key_type.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <optional>

namespace gpusort {

// The key of a file as the key options give it.
struct KeyOptions {
    KeyOrder order;                  // the whole record is one key of this type ...
    std::optional<KeySpec> records;  // ... unless records with a key spec are given

    // The key spec either way: `records`, or the whole record as one key of `order`.
    KeySpec spec() const;
};

// Adds --type, --record-size, --key, --format and --descending to `options`.
void add_key_options(boost::program_options::options_description& options);

// The key given by the options added by add_key_options, checked. --record-size defaults to the
// width of the --type, or to the smallest record that holds the --key fields; --descending
// reverses every field. Throws std::invalid_argument with a one-line message naming the option.
KeyOptions parse_key_options(const boost::program_options::variables_map& vm);

}  // namespace gpusort
