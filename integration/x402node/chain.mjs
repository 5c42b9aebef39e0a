// chain.mjs builds the local Solana chain: a LiteSVM instance with the real
// SPL Token program, the mainnet USDC mint written directly into its account,
// and the wallets an end-to-end payment needs. Nothing here is a mock of the
// protocol: transfers run through the real token program.
import { LiteSVM } from "litesvm";
import {
  address,
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  lamports,
} from "@solana/kit";
import {
  AccountState,
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getMintEncoder,
  getTokenEncoder,
} from "@solana-program/token";
import { generateKeyPairSync } from "node:crypto";

export const USDC_MAINNET = address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
export const MAINNET_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const USDC_DECIMALS = 6;
// 1 USDC: enough for 100 scans at $0.01.
export const PAYER_USDC_UNITS = 1_000_000n;
const SOL = 1_000_000_000n;

// newKeypair returns the 64-byte secret (seed || public key), the layout
// Solana tools and @solana/kit's createKeyPairSignerFromBytes use.
export function newKeypairBytes() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d, "base64url");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url");
  return new Uint8Array(Buffer.concat([seed, pub]));
}

export async function newWallet() {
  const secret = newKeypairBytes();
  const signer = await createKeyPairSignerFromBytes(secret);
  return { signer, address: signer.address, secret, secretBase58: getBase58Decoder().decode(secret) };
}

function rentExempt(svm, size) {
  return svm.minimumBalanceForRentExemption(BigInt(size));
}

// setMint writes an initialized SPL mint account with no authorities left
// (like a finished mint): only its address, decimals and supply matter here.
function setMint(svm, mint, supply) {
  const data = getMintEncoder().encode({
    mintAuthority: null,
    supply,
    decimals: USDC_DECIMALS,
    isInitialized: true,
    freezeAuthority: null,
  });
  svm.setAccount({
    address: mint,
    data: new Uint8Array(data),
    executable: false,
    lamports: lamports(rentExempt(svm, data.length)),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: BigInt(data.length),
  });
}

// setTokenAccount writes the associated token account of owner for mint
// holding amount units, and returns its address.
async function setTokenAccount(svm, mint, owner, amount) {
  const [ata] = await findAssociatedTokenPda({ mint, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const data = getTokenEncoder().encode({
    mint,
    owner,
    amount,
    delegate: null,
    state: AccountState.Initialized,
    isNative: null,
    delegatedAmount: 0n,
    closeAuthority: null,
  });
  svm.setAccount({
    address: ata,
    data: new Uint8Array(data),
    executable: false,
    lamports: lamports(rentExempt(svm, data.length)),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: BigInt(data.length),
  });
  return ata;
}

// createChain starts LiteSVM and funds the actors of a payment:
//  - merchant: receives USDC; its token account exists up front because the
//    exact scheme's client only transfers and never creates the destination.
//  - payer: 1 USDC and some SOL (it pays no fees, the fee payer does).
//  - unfunded: a token account holding 0 USDC, so its payment really fails.
//  - feePayer: the facilitator's key, with SOL for fees.
export async function createChain() {
  const svm = new LiteSVM().withSigverify(true).withBlockhashCheck(true);
  const merchant = await newWallet();
  const payer = await newWallet();
  const unfunded = await newWallet();
  const feePayer = await newWallet();

  setMint(svm, USDC_MAINNET, PAYER_USDC_UNITS);
  const merchantAta = await setTokenAccount(svm, USDC_MAINNET, merchant.address, 0n);
  const payerAta = await setTokenAccount(svm, USDC_MAINNET, payer.address, PAYER_USDC_UNITS);
  const unfundedAta = await setTokenAccount(svm, USDC_MAINNET, unfunded.address, 0n);
  for (const w of [feePayer, payer, unfunded, merchant]) {
    const res = svm.airdrop(w.address, lamports(10n * SOL));
    if (!res || typeof res.err === "function") {
      throw new Error(`airdrop to ${w.address} failed: ${res}`);
    }
  }
  return { svm, merchant, merchantAta, payer, payerAta, unfunded, unfundedAta, feePayer };
}
