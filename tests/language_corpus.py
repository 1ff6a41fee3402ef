"""A small corpus in four languages (English, German, French, Japanese), written for these tests.

One file per language, each a few paragraphs about its own subject, so contexts (which stay
within a file) are in one language each. :func:`write_corpus` puts them in a folder.
"""

from __future__ import annotations

from pathlib import Path

ENGLISH = """\
The home battery stores the energy that the solar panels produce during the day. When the panels
produce nothing at night, the battery supplies the house until its charge falls to ten percent.

A full charge takes about four hours on a sunny day. On cloudy days the battery charges more
slowly, and the app shows the expected time until it is full.

The battery must be installed indoors, in a dry room between five and thirty degrees. A garage is
fine as long as it does not freeze in winter.

During a power cut the battery switches to backup mode within two seconds. Only the circuits
marked as essential stay on, so that the fridge and the heating keep working for longer.

The warranty covers ten years or six thousand full cycles, whichever comes first. A claim needs
the serial number, which is printed on the side of the cabinet.
"""

GERMAN = """\
Die Wärmepumpe entzieht der Außenluft Wärme und gibt sie an das Heizwasser im Haus ab. Auch bei
minus fünfzehn Grad arbeitet sie noch, allerdings mit deutlich geringerer Effizienz.

Die Vorlauftemperatur sollte so niedrig wie möglich eingestellt werden. Jedes Grad weniger senkt
den Stromverbrauch der Anlage um etwa zweieinhalb Prozent.

Einmal im Jahr muss ein Fachbetrieb die Anlage warten. Dabei werden der Kältemittelkreis geprüft
und die Lamellen des Außengeräts von Laub und Schmutz befreit.

Im Sommer kann die Wärmepumpe das Haus auch kühlen. Dafür wird der Kreislauf umgekehrt, und die
Fußbodenheizung führt die Wärme aus den Räumen ab.

Die Förderung durch den Staat deckt bis zu dreißig Prozent der Kosten. Der Antrag muss gestellt
werden, bevor der Auftrag an den Installateur vergeben wird.
"""

FRENCH = """\
Le vélo électrique assiste le cycliste jusqu'à vingt-cinq kilomètres par heure. Au-delà de cette
vitesse, le moteur s'arrête et le vélo se comporte comme un vélo ordinaire.

La batterie se recharge en quatre heures environ sur une prise domestique. Il vaut mieux la
stocker à température ambiante et éviter de la laisser vide pendant plusieurs semaines.

L'autonomie dépend du niveau d'assistance choisi, du relief et du poids du cycliste. En mode éco,
une batterie complète permet de parcourir près de cent kilomètres.

Les freins à disque demandent un réglage régulier. Il faut remplacer les plaquettes dès que leur
épaisseur descend sous un millimètre et demi.

La garantie du cadre est de cinq ans, celle de la batterie de deux ans. Pour faire jouer la
garantie, il faut présenter la facture d'achat chez le revendeur.
"""

JAPANESE = """\
図書館の本は一人につき十冊まで、二週間借りることができます。予約が入っていなければ、貸出期間を一回だけ延長できます。

返却が遅れた場合は、遅れた日数と同じ期間、新しい本を借りることができなくなります。返却ポストは閉館後も利用できます。

館内の学習室は予約制で、一回につき三時間まで利用できます。予約は利用日の一週間前からウェブサイトで受け付けています。

電子書籍の貸出サービスでは、スマートフォンやタブレットで本を読むことができます。貸出期間が終わると、自動的に返却されます。

図書館カードを作るには、住所を確認できる身分証明書が必要です。市外に住んでいる人も、市内に通勤や通学をしていれば登録できます。
"""

TEXTS = {"en": ENGLISH, "de": GERMAN, "fr": FRENCH, "ja": JAPANESE}
NAMES = {"en": "battery.txt", "de": "waermepumpe.txt", "fr": "velo.txt", "ja": "toshokan.txt"}


def write_corpus(folder: Path, languages: tuple[str, ...] = ("en", "de", "fr", "ja")) -> Path:
    """The corpus files of ``languages`` in ``folder`` (made if needed); the folder back."""
    folder.mkdir(parents=True, exist_ok=True)
    for code in languages:
        (folder / NAMES[code]).write_text(TEXTS[code], encoding="utf-8")
    return folder


__all__ = ["NAMES", "TEXTS", "write_corpus"]
