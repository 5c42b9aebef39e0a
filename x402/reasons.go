package x402

// Reasons a payment is refused. Where the reference facilitator (@x402/svm
// 2.27.0) has a reason for the same fault, the string is the same, so a
// client sees one vocabulary whether the server or the facilitator refused.
const (
	ReasonUnsupportedScheme       = "invalid_exact_svm_unsupported_scheme"
	ReasonNetworkMismatch         = "invalid_exact_svm_network_mismatch"
	ReasonMissingFeePayer         = "invalid_exact_svm_payload_missing_fee_payer"
	ReasonCouldNotBeDecoded       = "invalid_exact_svm_payload_transaction_could_not_be_decoded"
	ReasonFeePayerMismatch        = "invalid_exact_svm_fee_payer_mismatch"
	ReasonSignatureInvalid        = "invalid_exact_svm_payload_signature_invalid"
	ReasonInstructionsLength      = "invalid_exact_svm_payload_transaction_instructions_length"
	ReasonComputeLimitInstruction = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"
	ReasonComputePriceInstruction = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction"
	ReasonComputePriceTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"
	ReasonComputeLimitTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high"
	ReasonExcessiveSigners        = "invalid_exact_svm_payload_excessive_signers"
	ReasonNoTransferInstruction   = "invalid_exact_svm_payload_no_transfer_instruction"
	ReasonFeePayerTransferring    = "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds"
	ReasonMintMismatch            = "invalid_exact_svm_payload_mint_mismatch"
	ReasonRecipientMismatch       = "invalid_exact_svm_payload_recipient_mismatch"
	ReasonAmountMismatch          = "invalid_exact_svm_payload_amount_mismatch"
	ReasonUnknownFourth           = "invalid_exact_svm_payload_unknown_fourth_instruction"
	ReasonUnknownFifth            = "invalid_exact_svm_payload_unknown_fifth_instruction"
	ReasonUnknownSixth            = "invalid_exact_svm_payload_unknown_sixth_instruction"
	ReasonUnknownSeventh          = "invalid_exact_svm_payload_unknown_seventh_instruction"
	ReasonMemoCount               = "invalid_exact_svm_payload_memo_count"
	ReasonMemoMismatch            = "invalid_exact_svm_payload_memo_mismatch"
	ReasonSimulationFailed        = "invalid_exact_svm_transaction_simulation_failed"
	ReasonDuplicateSettlement     = "duplicate_settlement"

	// Reasons of this package alone: the reference resolves lookup tables
	// over RPC and does not check decimals, the message version or a memo's
	// encoding, which the chain would refuse anyway; a server without RPC
	// refuses earlier.
	ReasonVersionUnsupported = "invalid_exact_svm_payload_transaction_version_unsupported"
	ReasonLookupTables       = "invalid_exact_svm_payload_address_table_lookups"
	ReasonDecimalsMismatch   = "invalid_exact_svm_payload_decimals_mismatch"
	ReasonMemoNotUTF8        = "invalid_exact_svm_payload_memo_not_utf8"
)

// Invalid is a payment refused by a check: the payload is at fault and the
// server answers 402 with Reason in the PAYMENT-REQUIRED error field.
type Invalid struct {
	Reason string
	Detail string // for logs: what exactly did not match
}

func (e *Invalid) Error() string {
	if e.Detail == "" {
		return "invalid payment: " + e.Reason
	}
	return "invalid payment: " + e.Reason + ": " + e.Detail
}

func invalid(reason, detail string) *Invalid { return &Invalid{Reason: reason, Detail: detail} }
