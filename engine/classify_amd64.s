//go:build !purego

#include "textflag.h"
#include "runs_amd64.h"

// func classifyVBMI(pos []int32, raw []byte, from, run, tok int) (n, end, runOut, tokOut int, ascii, pct bool)
//
// One VPERMI2B looks up the unitFlags of a block's 64 bytes (its two
// registers hold the table's 128 entries), and VPTESTMB turns each flag
// into a mask: the leetspeak characters, whose positions are written as
// leetAVX2 writes them, and the bytes that are not base64, along which the
// runs of base64 bytes are followed as tokenSkipAVX512 follows them until
// one is 16 long. The flags of every block are ORed, for the '%' at the
// end. The bytes after the whole blocks are loaded as a block under a mask
// (AVX-512 suppresses faults on the bytes masked out, so nothing past raw
// is read), the rest of it zeros, whose flags are none.
//
// Registers: SI raw, R12 the block's position, DX the end of the whole
// blocks, R11 the end of raw, DI the next position's place, R13 the last
// place with room for 64, R8 the base64 bytes that end the blocks before,
// R14 the first token's start (-1: none yet), R9 and R10 the high and low
// bits of each byte of a word.
TEXT ·classifyVBMI(SB), NOSPLIT, $0-106
	MOVQ pos_base+0(FP), DI
	MOVQ pos_len+8(FP), R13
	LEAQ -256(DI)(R13*4), R13
	MOVQ raw_base+24(FP), SI
	MOVQ raw_len+32(FP), R11
	MOVQ from+48(FP), R12
	MOVQ run+56(FP), R8
	MOVQ tok+64(FP), R14
	VPXORQ Z11, Z11, Z11 // the flags seen
	MOVQ R11, DX
	SUBQ R12, DX
	ANDQ $-64, DX
	ADDQ R12, DX

	MOVQ      $0x0101010101010101, R10
	MOVQ      $0x8080808080808080, R9
	VMOVDQU64 ·unitFlags+0(SB), Z6
	VMOVDQU64 ·unitFlags+64(SB), Z7
	MOVL      $0x01010101, AX // fLeet
	VPBROADCASTD AX, Z8
	MOVL      $0x02020202, AX // fB64
	VPBROADCASTD AX, Z9

loop:
	CMPQ      R12, DX
	JAE       tail
	VMOVDQU64 (SI)(R12*1), Z0

block:
	VPMOVB2M  Z0, K1
	KORTESTQ  K1, K1
	JNZ       notASCII
	VPERMI2B  Z7, Z6, Z0
	VPORQ     Z0, Z11, Z11
	VPTESTMB  Z8, Z0, K2
	KORTESTQ  K2, K2
	JZ        tokens
	CMPQ      DI, R13
	JGT       done
	KMOVQ     K2, AX

bits:
	TZCNTQ AX, BX
	ADDQ   R12, BX
	MOVL   BX, (DI)
	ADDQ   $4, DI
	BLSRQ  AX, AX
	JNZ    bits

tokens:
	TESTQ     R14, R14
	JNS       next
	VPTESTNMB Z9, Z0, K3
	KMOVQ     K3, BX // the bytes that are not base64

	// A run from the blocks before that the block's first bytes make 16
	// long.
	TZCNTQ BX, AX
	ADDQ   R8, AX
	CMPQ   AX, $16
	JAE    before

	// No whole group of 8 base64 bytes (a zero byte of BX): no run starts
	// here.
	MOVQ  BX, AX
	SUBQ  R10, AX
	ANDNQ AX, BX, AX
	ANDQ  R9, AX
	JZ    carry

	MOVQ BX, AX
	NOTQ AX
	RUNS16(AX, CX)
	JNZ  inside

carry:
	// The base64 bytes that end the block (not all 64: that run is 16).
	LZCNTQ BX, R8

next:
	ADDQ $64, R12
	JMP  loop

before:
	MOVQ R12, R14
	SUBQ R8, R14
	JMP  next

inside:
	TZCNTQ AX, R14
	ADDQ   R12, R14
	JMP    next

tail:
	// The bytes after the whole blocks, if any.
	CMPQ       R12, R11
	JAE        done
	MOVQ       R11, CX
	SUBQ       R12, CX
	MOVQ       $-1, AX
	BZHIQ      CX, AX, AX
	KMOVQ      AX, K4
	VMOVDQU8.Z (SI)(R12*1), K4, Z0
	JMP        block

done:
	// After the tail R12 is past the end.
	CMPQ    R12, R11
	CMOVQGT R11, R12
	MOVQ pos_base+0(FP), AX
	SUBQ AX, DI
	SHRQ $2, DI
	MOVQ DI, n+72(FP)
	MOVQ R12, end+80(FP)
	MOVQ R8, runOut+88(FP)
	MOVQ R14, tokOut+96(FP)
	MOVB $1, ascii+104(FP)
	MOVL $0x04040404, AX // fPct
	VPBROADCASTD AX, Z8
	VPTESTMB Z8, Z11, K1
	KORTESTQ K1, K1
	SETNE pct+105(FP)
	VZEROUPPER
	RET

notASCII:
	MOVQ $0, n+72(FP)
	MOVQ $0, end+80(FP)
	MOVQ $0, runOut+88(FP)
	MOVQ $0, tokOut+96(FP)
	MOVB $0, ascii+104(FP)
	MOVB $0, pct+105(FP)
	VZEROUPPER
	RET
