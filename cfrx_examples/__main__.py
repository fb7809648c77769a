"""`python -m cfrx_examples`: lists the example programs."""

from cfrx_examples import PROGRAMS

if __name__ == "__main__":
    print("openspiel_cfrx example programs (each also `python -m cfrx_examples.<module>`; "
          "--helpfull lists its flags):\n")
    for module, what in PROGRAMS.items():
        print(f"  cfrx-{module.replace('_', '-'):<22} {what}")
