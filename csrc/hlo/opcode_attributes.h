// Which attributes each opcode takes, as XLA's parser knows them.
#ifndef UIR_HLO_OPCODE_ATTRIBUTES_H_
#define UIR_HLO_OPCODE_ATTRIBUTES_H_

#include "hlo/attributes.h"
#include "hlo/opcode.h"

namespace uir::hlo {

// True when `key` may appear on an instruction of `opcode`. The generic
// attributes (sharding, frontend_attributes, metadata, backend_config,
// statistics, origin) are allowed everywhere.
bool AttributeAllowed(HloOpcode opcode, AttrKey key);

}  // namespace uir::hlo

#endif  // UIR_HLO_OPCODE_ATTRIBUTES_H_
